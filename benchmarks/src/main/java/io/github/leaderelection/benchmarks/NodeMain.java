package io.github.leaderelection.benchmarks;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A node: one JVM that runs one or more candidates of one contender, started by the
 * coordinator. It prints protocol lines starting with {@code @} on standard output
 * (timestamps are {@link System#nanoTime()}, the system-wide monotonic clock on Linux, so
 * comparable between JVMs of one host) and takes commands on standard input:
 * {@code start}, {@code stats}, {@code stop}.
 *
 * <p>
 * Arguments:
 * {@code <contender> <nodeId> <groups> <candidates> <lease,renew,retry ms> <autostart> [balance=<weight>]}:
 * with {@code balance=<weight>} (this starter only) each candidate's engine balances
 * leadership over the live candidates with that weight
 * ({@code LeaderElectionEngine.Builder#balance}, no preferred leaders).
 */
public final class NodeMain {

	private static final PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out),
			true, StandardCharsets.UTF_8);

	/**
	 * The node option that has the node report each store call of this starter's engine
	 * ({@code @CALL start method end}).
	 */
	static final String TRACE_CALLS = "trace-calls";

	private NodeMain() {
	}

	public static void main(String[] args) throws Exception {
		// Libraries must not write on the protocol stream.
		System.setOut(System.err);
		Contender contender = Contender.parse(args[0]);
		String nodeId = args[1];
		int groupCount = Integer.parseInt(args[2]);
		int candidates = Integer.parseInt(args[3]);
		Timing timing = Timing.parse(args[4]);
		boolean autostart = Boolean.parseBoolean(args[5]);
		int balanceWeight = 0;
		boolean traceCalls = false;
		for (int i = 6; i < args.length; i++) {
			if (args[i].startsWith("balance=")) {
				balanceWeight = Integer.parseInt(args[i].substring(8));
			}
			else if (args[i].equals(TRACE_CALLS)) {
				traceCalls = true;
			}
			else {
				throw new IllegalArgumentException("Unknown node option " + args[i]);
			}
		}
		List<String> groups = groups(groupCount);
		boolean tracing = traceCalls;
		List<Participant> participants = new ArrayList<>();
		for (int i = 0; i < candidates; i++) {
			String candidateId = (candidates == 1) ? nodeId : nodeId + "-c" + i;
			participants.add(Participants.create(contender, candidateId, groups, timing, balanceWeight,
					new Participant.Events() {
						@Override
						public void granted(String group) {
							emit("@G " + group + " " + System.nanoTime() + " " + candidateId);
						}

						@Override
						public void revoked(String group, String reason) {
							emit("@R " + group + " " + System.nanoTime() + " " + candidateId + " " + reason);
						}

						@Override
						public void released() {
							emit("@RELEASED " + System.nanoTime());
						}

						@Override
						public void called(String method, long startNanos, long endNanos) {
							if (tracing) {
								emit("@CALL " + startNanos + " " + method + " " + endNanos);
							}
						}
					}));
		}
		if (autostart) {
			for (Participant participant : participants) {
				participant.start();
			}
		}
		emit("@READY " + System.nanoTime());
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		String command;
		while ((command = in.readLine()) != null) {
			switch (command.trim()) {
				case "start" -> {
					emit("@STARTING " + System.nanoTime());
					for (Participant participant : participants) {
						participant.start();
					}
				}
				case "stats" -> emit(stats(participants, false));
				case "stats-gc" -> emit(stats(participants, true));
				case "stop" -> {
					emit("@STOPPING " + System.nanoTime());
					for (Participant participant : participants) {
						participant.close();
					}
					emit("@STOPPED " + System.nanoTime());
					System.exit(0);
				}
				default -> System.err.println("unknown command " + command);
			}
		}
		// The coordinator went away: do not linger.
		System.exit(1);
	}

	static List<String> groups(int count) {
		if (count == 1) {
			return List.of("bench");
		}
		List<String> groups = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			groups.add(String.format("g%04d", i));
		}
		return groups;
	}

	private static synchronized void emit(String line) {
		out.println(line);
	}

	private static String stats(List<Participant> participants, boolean gc) {
		if (gc) {
			System.gc();
		}
		int led = 0;
		long calls = 0;
		for (Participant participant : participants) {
			led += participant.led();
			long c = participant.storeCalls();
			calls = (c < 0 || calls < 0) ? -1 : calls + c;
		}
		Map<String, Integer> families = new TreeMap<>();
		for (ThreadInfo info : ManagementFactory.getThreadMXBean().dumpAllThreads(false, false)) {
			families.merge(family(info.getThreadName()), 1, Integer::sum);
		}
		com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory
			.getOperatingSystemMXBean();
		long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
		StringBuilder line = new StringBuilder("@STATS");
		line.append(" nanos=").append(System.nanoTime());
		line.append(" threads=").append(ManagementFactory.getThreadMXBean().getThreadCount());
		line.append(" cpuNanos=").append(os.getProcessCpuTime());
		line.append(" heapUsed=").append(heap);
		line.append(" led=").append(led);
		line.append(" storeCalls=").append(calls);
		line.append(" callsByMethod=").append(participants.get(0).storeCallsByMethod());
		// What the first candidate's balancing last counted: candidate:groups;...
		line.append(" view=");
		participants.get(0).leadersByCandidate().forEach((c, n) -> line.append(c).append(':').append(n).append(';'));
		line.append(" families=");
		families.forEach((name, count) -> line.append(name).append(':').append(count).append(','));
		return line.toString();
	}

	/** A thread's name without its trailing number, so that pools group together. */
	static String family(String name) {
		return name.replaceAll("[-#]?\\d+$", "").replaceAll("[\\s,:=]", "_");
	}

}
