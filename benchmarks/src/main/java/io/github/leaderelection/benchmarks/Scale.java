package io.github.leaderelection.benchmarks;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Figure 4: many groups on three nodes (JVMs): time from the start of the three until
 * every group has a leader, then per node in steady state its threads, CPU, heap and the
 * store requests.
 */
final class Scale {

	static final int NODES = 3;

	private Scale() {
	}

	static Map<String, Object> run(Contender contender, int groups, Timing timing, long windowMs, Path logDir)
			throws Exception {
		Store store = contender.store();
		StoreAdmin.reset(contender);
		BlockingQueue<NodeProcess.Event> events = new LinkedBlockingQueue<>();
		List<NodeProcess> nodes = new ArrayList<>();
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("contender", contender.id());
		result.put("label", contender.label());
		result.put("groups", groups);
		result.put("nodes", NODES);
		result.put("timing", timing.toString());
		try {
			for (int i = 0; i < NODES; i++) {
				nodes.add(NodeProcess.start(contender, "s" + i, groups, 1, timing, false, events, logDir));
			}
			for (NodeProcess node : nodes) {
				node.await("READY", 120000);
			}
			Map<String, Long> idle = StoreAdmin.sample(store);
			long started = System.nanoTime();
			for (NodeProcess node : nodes) {
				node.send("start");
			}
			Set<String> led = new HashSet<>();
			long lastGrant = started;
			long deadline = started + TimeUnit.SECONDS.toNanos(120);
			while (led.size() < groups) {
				NodeProcess.Event event = events.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
				if (event == null) {
					break;
				}
				if (event.type().equals("G") && led.add(event.group())) {
					lastGrant = event.nanos();
				}
			}
			result.put("groupsLed", led.size());
			result.put("timeUntilAllLedMs", (led.size() == groups) ? (lastGrant - started) / 1e6 : null);
			// Let the last grants settle: leaders renew and followers poll once more.
			Thread.sleep(Math.max(1000, timing.retryMs()));
			List<Map<String, String>> before = new ArrayList<>();
			for (NodeProcess node : nodes) {
				before.add(node.stats(false));
			}
			RedisMonitor monitor = (store == Store.REDIS) ? RedisMonitor.start() : null;
			Map<String, Long> s0 = StoreAdmin.sample(store);
			Thread.sleep(windowMs);
			Map<String, Long> s1 = StoreAdmin.sample(store);
			List<Map<String, Object>> perNode = new ArrayList<>();
			double serverRate = StoreLoad.rate(s0, s1, "requests", windowMs);
			result.put("counter", StoreAdmin.requestCounter(store));
			if (monitor != null) {
				monitor.close();
				result.put("commandstatsPerSecond", serverRate);
				serverRate = monitor.requests.sum() * 1000.0 / windowMs;
				result.put("counter", "MONITOR: commands from clients naming the benchmark's keys");
				result.put("monitorPerSecond", monitor.perSecond(windowMs));
			}
			for (int i = 0; i < NODES; i++) {
				Map<String, String> b = before.get(i);
				Map<String, String> a = nodes.get(i).stats(false);
				Map<String, String> gc = nodes.get(i).stats(true);
				double seconds = (Long.parseLong(a.get("nanos")) - Long.parseLong(b.get("nanos"))) / 1e9;
				Map<String, Object> node = new LinkedHashMap<>();
				node.put("node", nodes.get(i).id);
				node.put("led", Integer.parseInt(a.get("led")));
				node.put("threads", Integer.parseInt(a.get("threads")));
				node.put("electionThreads", electionThreads(contender, a.get("families")));
				node.put("cpuPercent",
						(Long.parseLong(a.get("cpuNanos")) - Long.parseLong(b.get("cpuNanos"))) / 1e9 / seconds * 100);
				node.put("heapAfterGcMb", Long.parseLong(gc.get("heapUsed")) / 1048576.0);
				long c0 = Long.parseLong(b.get("storeCalls"));
				long c1 = Long.parseLong(a.get("storeCalls"));
				node.put("clientStoreCallsPerSecond", (c0 < 0) ? null : (c1 - c0) / seconds);
				node.put("threadFamilies", a.get("families"));
				perNode.add(node);
			}
			result.put("serverRequestsPerSecond", serverRate);
			result.put("serverRequestsPerSecondPerNode", serverRate / NODES);
			result.put("perNode", perNode);
			result.put("idleCounters", idle.get("requests"));
			System.err.printf("  %s x %d groups: all led after %s ms; %.0f requests/s at the server; threads %s%n",
					contender.id(), groups, result.get("timeUntilAllLedMs"), serverRate,
					perNode.stream().map((n) -> n.get("threads") + "/" + n.get("electionThreads")).toList());
		}
		finally {
			for (NodeProcess node : nodes) {
				try {
					node.send("stop");
				}
				catch (Exception ex) {
					// gone
				}
			}
			for (NodeProcess node : nodes) {
				node.stop(30000);
			}
		}
		return result;
	}

	/** Threads the contender's election runs on, by thread name. */
	static int electionThreads(Contender contender, String families) {
		String prefix = switch (contender.kind()) {
			case OURS -> "leader-election";
			case SPRING_INTEGRATION ->
				(contender.store() == Store.ZOOKEEPER) ? "Curator-LeaderSelector" : "lock-leadership";
			case SEED_SQL -> "pool";
		};
		int count = 0;
		for (String family : families.split(",")) {
			int colon = family.lastIndexOf(':');
			if (colon > 0 && family.startsWith(prefix)) {
				count += Integer.parseInt(family.substring(colon + 1));
			}
		}
		return count;
	}

}
