package io.github.leaderelection.benchmarks;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
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
			// Who believes it leads each group, from the nodes' grant and revocation
			// lines.
			Map<String, Integer> believers = new HashMap<>();
			Set<String> ledOnce = new HashSet<>();
			Map<String, Integer> changesBefore = new TreeMap<>();
			int ledNow = 0;
			long eachLedOnce = -1;
			long allLed = -1;
			long lastChange = started;
			// 120 s, or 20 ms per group where that is longer (etcd took 29 s for 1,000).
			long deadline = started + TimeUnit.MILLISECONDS.toNanos(Math.max(120_000, 20L * groups));
			while (allLed < 0) {
				NodeProcess.Event event = events.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
				if (event == null) {
					break;
				}
				ledNow += apply(event, believers, changesBefore);
				if (event.type().equals("G") || event.type().equals("R")) {
					lastChange = event.nanos();
				}
				if (event.type().equals("G") && ledOnce.add(event.group()) && ledOnce.size() == groups) {
					eachLedOnce = event.nanos();
				}
				if (ledNow == groups) {
					allLed = event.nanos();
				}
			}
			result.put("groupsLed", ledNow);
			// Every group with a leader at one instant (a group led and lost again before
			// the last one was granted does not count).
			result.put("timeUntilAllLedMs", (allLed >= 0) ? (allLed - started) / 1e6 : null);
			result.put("timeUntilEachLedOnceMs", (eachLedOnce >= 0) ? (eachLedOnce - started) / 1e6 : null);
			// Steady state: no leadership change for two retry periods and, where the
			// calls are counted, no node making more than 10 store calls in a retry
			// period (the start's attempts group by group are over). At most 120 s more.
			long steadyDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
			long quiet = TimeUnit.MILLISECONDS.toNanos(2 * timing.retryMs());
			long[] lastCalls = new long[NODES];
			boolean steady = false;
			while (!steady && System.nanoTime() - steadyDeadline < 0) {
				long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timing.retryMs());
				NodeProcess.Event event;
				while ((event = events.poll(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS)) != null) {
					ledNow += apply(event, believers, changesBefore);
					if (event.type().equals("G") || event.type().equals("R")) {
						lastChange = event.nanos();
					}
				}
				boolean callsSettled = true;
				for (int i = 0; i < NODES; i++) {
					long calls = Long.parseLong(nodes.get(i).stats(false).get("storeCalls"));
					if (calls >= 0 && (lastCalls[i] == 0 || calls - lastCalls[i] > 10)) {
						callsSettled = false;
					}
					lastCalls[i] = calls;
				}
				steady = callsSettled && ledNow == groups && System.nanoTime() - lastChange >= quiet;
			}
			result.put("steadyAfterMs", steady ? (System.nanoTime() - started) / 1e6 : null);
			result.put("lastLeadershipChangeBeforeWindowMs", (lastChange - started) / 1e6);
			result.put("leadershipChangesBeforeWindow", changesBefore);
			List<Map<String, String>> before = new ArrayList<>();
			for (NodeProcess node : nodes) {
				before.add(node.stats(false));
			}
			RedisMonitor monitor = (store == Store.REDIS) ? RedisMonitor.start() : null;
			events.clear();
			Map<String, Long> s0 = StoreAdmin.sample(store);
			List<Double> perPeriod = new ArrayList<>();
			if (store == Store.POSTGRESQL) {
				// PostgreSQL's statistics arrive late: a connection that went idle hands
				// in its counts when next used, so the start's thousands of calls can
				// land in the window at once. Sampled every retry period (from another
				// database, so sampling adds nothing), the median period is the steady
				// rate.
				long step = timing.retryMs();
				Map<String, Long> last = s0;
				for (long waited = 0; waited < windowMs; waited += step) {
					Thread.sleep(Math.min(step, windowMs - waited));
					Map<String, Long> now = StoreAdmin.sample(store);
					perPeriod.add(StoreLoad.rate(last, now, "requests", Math.min(step, windowMs - waited)));
					last = now;
				}
			}
			else {
				Thread.sleep(windowMs);
			}
			Map<String, Long> s1 = StoreAdmin.sample(store);
			// Leadership changes during the window: none in a steady state.
			Map<String, Integer> changes = new TreeMap<>();
			NodeProcess.Event late;
			while ((late = events.poll()) != null) {
				apply(late, believers, changes);
			}
			result.put("leadershipChangesDuringWindow", changes);
			List<Map<String, Object>> perNode = new ArrayList<>();
			double serverRate = StoreLoad.rate(s0, s1, "requests", windowMs);
			result.put("counter", StoreAdmin.requestCounter(store));
			if (!perPeriod.isEmpty()) {
				result.put("serverRequestsPerSecondWholeWindow", serverRate);
				result.put("serverRequestsPerSecondEachPeriod", perPeriod);
				serverRate = Stats.percentile(perPeriod, 50);
				result.put("counter", StoreAdmin.requestCounter(store) + ", median of the retry periods of the window");
			}
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
				node.put("storeCallsByMethodBefore", b.get("callsByMethod"));
				node.put("storeCallsByMethodAfter", a.get("callsByMethod"));
				node.put("threadFamilies", a.get("families"));
				perNode.add(node);
			}
			Map<String, Object> breakdown = new LinkedHashMap<>();
			for (String key : s1.keySet()) {
				double value = StoreLoad.rate(s0, s1, key, windowMs);
				if (!key.equals("requests") && value > 0.05) {
					breakdown.put(key, value);
				}
			}
			result.put("serverCountersPerSecond", breakdown);
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

	/**
	 * Counts a grant or revocation line.
	 * @return how the number of groups with a leader changed
	 */
	private static int apply(NodeProcess.Event event, Map<String, Integer> believers, Map<String, Integer> changes) {
		if (event.type().equals("G")) {
			changes.merge("granted", 1, Integer::sum);
			return (believers.merge(event.group(), 1, Integer::sum) == 1) ? 1 : 0;
		}
		if (event.type().equals("R")) {
			String[] parts = event.line().split(" ");
			changes.merge("revoked " + ((parts.length > 4) ? parts[4] : "?"), 1, Integer::sum);
			return (believers.merge(event.group(), -1, Integer::sum) == 0) ? -1 : 0;
		}
		return 0;
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
