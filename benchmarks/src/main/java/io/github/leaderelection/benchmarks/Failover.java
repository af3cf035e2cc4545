package io.github.leaderelection.benchmarks;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Figure 2: time from the leader's {@code kill -9} to the next grant, and from the start
 * of a graceful stop to the next grant, with one leader and one follower, each in a JVM
 * of its own. After each trial the follower leads and a fresh follower is started.
 */
final class Failover {

	private final Contender contender;

	private final Timing timing;

	private final Path logDir;

	private int nodes;

	private NodeProcess leader;

	private NodeProcess follower;

	Failover(Contender contender, Timing timing, Path logDir) {
		this.contender = contender;
		this.timing = timing;
		this.logDir = logDir;
	}

	Map<String, Object> run(int trials) throws Exception {
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("contender", this.contender.id());
		result.put("label", this.contender.label());
		result.put("timing", this.timing.toString());
		try {
			StoreAdmin.reset(this.contender);
			startPair();
			result.put("crash", trials(trials, true));
			result.put("graceful", trials(trials, false));
		}
		finally {
			closeAll();
		}
		return result;
	}

	private Map<String, Object> trials(int trials, boolean crash) throws Exception {
		List<Double> samples = new ArrayList<>();
		List<String> failures = new ArrayList<>();
		List<Double> leaderStops = new ArrayList<>();
		Map<String, List<Double>> handOver = new LinkedHashMap<>();
		for (int i = 0; i < trials; i++) {
			try {
				samples.add(crash ? crashOnce() : stopOnce(leaderStops, handOver));
				this.leader = this.follower;
				this.follower = startFollower();
			}
			catch (IllegalStateException ex) {
				failures.add(ex.getMessage());
				System.err.println("  trial failed: " + ex.getMessage());
				closeAll();
				StoreAdmin.reset(this.contender);
				startPair();
			}
		}
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("trials", samples.size());
		result.put("p50Ms", Stats.percentile(samples, 50));
		result.put("p99Ms", Stats.percentile(samples, 99));
		result.put("maxMs", Stats.max(samples));
		result.put("samplesMs", samples);
		result.put("failures", failures);
		if (!crash) {
			// From the start of the stop until the leader's election has stopped and
			// released the lease.
			result.put("leaderStopP50Ms", Stats.percentile(leaderStops, 50));
			result.put("leaderStopSamplesMs", leaderStops);
			Map<String, Object> parts = new LinkedHashMap<>();
			handOver.forEach((part, millis) -> parts.put(part, Stats.percentile(millis, 50)));
			result.put("handOverP50Ms", parts);
			System.err.printf("  %s graceful hand-over, p50 of each part (ms): %s%n", this.contender.id(), parts);
		}
		System.err.printf("  %s %s: p50 %.0f ms, p99 %.0f ms, max %.0f ms (%d trials, %d failed)%n",
				this.contender.id(), crash ? "crash" : "graceful", Stats.percentile(samples, 50),
				Stats.percentile(samples, 99), Stats.max(samples), samples.size(), failures.size());
		return result;
	}

	private double crashOnce() throws Exception {
		long killed = System.nanoTime();
		this.leader.kill();
		NodeProcess.Event granted = this.follower.await("G", 3 * this.timing.leaseMs() + 10000);
		this.leader.awaitExit(5000);
		if (granted.nanos() < killed) {
			throw new IllegalStateException("The follower was granted before the kill");
		}
		return (granted.nanos() - killed) / 1e6;
	}

	/**
	 * @param handOver where each part of the hand-over goes, in milliseconds, by name: on
	 * the leader, from the stop to its release call and each store call of its stop; on
	 * the follower, from the end of that release to its first store call that ended after
	 * it, the time in each method of those calls, and from the last of them to the grant
	 * (this starter's nodes only; the others make no calls the benchmark sees)
	 */
	private double stopOnce(List<Double> leaderStops, Map<String, List<Double>> handOver) throws Exception {
		this.leader.send("stop");
		NodeProcess.Event stopping = this.leader.await("STOPPING", 10000);
		NodeProcess.Event released = this.leader.await("RELEASED", 30000);
		NodeProcess.Event granted = this.follower.await("G", 2 * this.timing.leaseMs() + 10000);
		this.leader.stop(15000);
		if (granted.nanos() < stopping.nanos()) {
			throw new IllegalStateException("The follower was granted before the stop");
		}
		leaderStops.add((released.nanos() - stopping.nanos()) / 1e6);
		timeParts(stopping, released, granted, handOver);
		return (granted.nanos() - stopping.nanos()) / 1e6;
	}

	/**
	 * Adds the parts of a graceful hand-over: the leader's calls during its stop, the
	 * follower's from the end of the release to the grant.
	 */
	private void timeParts(NodeProcess.Event stopping, NodeProcess.Event released, NodeProcess.Event granted,
			Map<String, List<Double>> handOver) {
		long releaseEnd = 0;
		for (NodeProcess.Event call : this.leader.takeAll("CALL")) {
			String[] parts = call.line().split(" ");
			long end = Long.parseLong(parts[3]);
			if (call.nanos() >= stopping.nanos() && end <= released.nanos()) {
				if (parts[2].equals("release") && releaseEnd == 0) {
					releaseEnd = end;
					part(handOver, "leader: stop to release", call.nanos() - stopping.nanos());
				}
				part(handOver, "leader: " + parts[2], end - call.nanos());
			}
		}
		List<long[]> calls = new ArrayList<>();
		Map<String, Long> byMethod = new LinkedHashMap<>();
		for (NodeProcess.Event call : this.follower.takeAll("CALL")) {
			String[] parts = call.line().split(" ");
			long end = Long.parseLong(parts[3]);
			if (releaseEnd != 0 && end > releaseEnd && end <= granted.nanos()) {
				calls.add(new long[] { call.nanos(), end });
				byMethod.merge(parts[2], end - call.nanos(), Long::sum);
			}
		}
		if (!calls.isEmpty()) {
			part(handOver, "follower: release to first call", calls.get(0)[0] - releaseEnd);
			byMethod.forEach((method, nanos) -> part(handOver, "follower: " + method, nanos));
			part(handOver, "follower: last call to grant", granted.nanos() - calls.get(calls.size() - 1)[1]);
		}
	}

	private static void part(Map<String, List<Double>> handOver, String name, long nanos) {
		handOver.computeIfAbsent(name, (n) -> new ArrayList<>()).add(nanos / 1e6);
	}

	private void startPair() throws Exception {
		this.leader = start();
		this.leader.await("G", 60000);
		this.follower = startFollower();
	}

	private NodeProcess startFollower() throws Exception {
		NodeProcess node = start();
		// Let it join and make its first attempts, so that it is a settled follower.
		Thread.sleep(Math.max(500, this.timing.retryMs()));
		return node;
	}

	private NodeProcess start() throws Exception {
		NodeProcess node = NodeProcess.start(this.contender, "n" + (this.nodes++), 1, 1, this.timing, true, null,
				this.logDir, NodeProcess.FAILOVER_JVM_OPTIONS, List.of(NodeMain.TRACE_CALLS));
		node.await("READY", 60000);
		return node;
	}

	private void closeAll() throws InterruptedException {
		for (NodeProcess node : new NodeProcess[] { this.leader, this.follower }) {
			if (node != null) {
				node.close();
			}
		}
		this.leader = null;
		this.follower = null;
	}

}
