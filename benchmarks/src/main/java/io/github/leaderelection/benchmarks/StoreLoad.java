package io.github.leaderelection.benchmarks;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Figure 3: requests per second that the store's server counts in steady state, with one
 * group and five candidates (one leader, four followers). The five candidates run in one
 * node JVM, each with its own engine or initiator and its own connection pool or client,
 * as five application instances would. The coordinator's own counter queries are measured
 * before the node starts and subtracted.
 */
final class StoreLoad {

	static final int CANDIDATES = 5;

	private StoreLoad() {
	}

	static Map<String, Object> run(Contender contender, Timing timing, long baselineMs, long warmupMs, long windowMs,
			Path logDir) throws Exception {
		Store store = contender.store();
		StoreAdmin.reset(contender);
		Map<String, Long> b0 = StoreAdmin.sample(store);
		Thread.sleep(baselineMs);
		Map<String, Long> b1 = StoreAdmin.sample(store);
		// The servers counted here see no other client (a private MariaDB and ZooKeeper,
		// a database of our own in PostgreSQL, MONITOR filtered by our keys in Redis) but
		// our own counter queries: those are counted once per sample, whatever the
		// window, so they are subtracted per window.
		long ownPerSample = b1.getOrDefault("requests", 0L) - b0.getOrDefault("requests", 0L);
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("contender", contender.id());
		result.put("label", contender.label());
		result.put("candidates", CANDIDATES);
		result.put("timing", (contender.kind() == Contender.Kind.SEED_SQL) ? "upsert + SELECT every 1 s, 20 s timeout"
				: timing.toString());
		result.put("counter", StoreAdmin.requestCounter(store));
		try (NodeProcess node = NodeProcess.start(contender, "load", 1, CANDIDATES, timing, true, null, logDir)) {
			node.await("READY", 60000);
			node.await("G", 60000);
			Thread.sleep(warmupMs);
			Map<String, String> n0 = node.stats(false);
			RedisMonitor monitor = (store == Store.REDIS) ? RedisMonitor.start() : null;
			Map<String, Long> s0 = StoreAdmin.sample(store);
			Thread.sleep(windowMs);
			Map<String, Long> s1 = StoreAdmin.sample(store);
			if (monitor != null) {
				monitor.close();
			}
			Map<String, String> n1 = node.stats(false);
			double requests = (s1.getOrDefault("requests", 0L) - s0.getOrDefault("requests", 0L) - ownPerSample)
					* 1000.0 / windowMs;
			double baseline = ownPerSample * 1000.0 / windowMs;
			if (monitor != null) {
				// Requests naming the benchmark's keys, as MONITOR saw them: no baseline
				// needed.
				result.put("commandstatsPerSecondMinusBaseline", requests);
				requests = monitor.requests.sum() * 1000.0 / windowMs;
				baseline = 0;
				result.put("counter", "MONITOR: commands from clients naming the benchmark's keys");
				result.put("monitorPerSecond", monitor.perSecond(windowMs));
			}
			result.put("requestsPerSecond", requests);
			result.put("baselinePerSecond", baseline);
			double period = (contender.kind() == Contender.Kind.SEED_SQL) ? 1000 : timing.retryMs();
			result.put("periodMs", period);
			result.put("perCandidatePerPeriod", requests / CANDIDATES * period / 1000.0);
			long calls0 = Long.parseLong(n0.get("storeCalls"));
			long calls1 = Long.parseLong(n1.get("storeCalls"));
			double nodeSeconds = (Long.parseLong(n1.get("nanos")) - Long.parseLong(n0.get("nanos"))) / 1e9;
			result.put("clientCallsPerSecond", (calls0 < 0) ? null : (calls1 - calls0) / nodeSeconds);
			result.put("leaders", Integer.parseInt(n1.get("led")));
			Map<String, Object> breakdown = new LinkedHashMap<>();
			for (String key : s1.keySet()) {
				double value = rate(s0, s1, key, windowMs);
				if (!key.equals("requests") && value > 0.05) {
					breakdown.put(key, value);
				}
			}
			result.put("serverCountersPerSecond", breakdown);
			node.stop(20000);
		}
		System.err.printf(
				"  %s: %.1f requests/s at the server (own sampling %.1f/s subtracted), %.2f per candidate per %.0f ms%n",
				contender.id(), result.get("requestsPerSecond"), result.get("baselinePerSecond"),
				result.get("perCandidatePerPeriod"), result.get("periodMs"));
		return result;
	}

	static double rate(Map<String, Long> before, Map<String, Long> after, String key, long millis) {
		long delta = after.getOrDefault(key, 0L) - before.getOrDefault(key, 0L);
		return delta * 1000.0 / millis;
	}

}
