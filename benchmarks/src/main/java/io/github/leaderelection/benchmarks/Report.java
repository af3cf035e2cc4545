package io.github.leaderelection.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Checks the figures against the goals and renders the tables of results.md.
 */
final class Report {

	private Report() {
	}

	@SuppressWarnings("unchecked")
	static List<Map<String, Object>> rows(Map<String, Object> results, String key) {
		Object value = results.get(key);
		return (value instanceof List<?> list) ? (List<Map<String, Object>>) list : List.of();
	}

	@SuppressWarnings("unchecked")
	static Map<String, Object> map(Object value) {
		return (value instanceof Map<?, ?> map) ? (Map<String, Object>) map : Map.of();
	}

	static double number(Object value) {
		return (value instanceof Number n) ? n.doubleValue() : Double.NaN;
	}

	static Optional<Map<String, Object>> find(List<Map<String, Object>> rows, String key, Object value) {
		return rows.stream().filter((row) -> value.equals(row.get(key))).findFirst();
	}

	static double gate(Map<String, Object> results, String benchmark) {
		return find(rows(results, "gate"), "benchmark", benchmark).map((r) -> number(r.get("nsPerCall")))
			.orElse(Double.NaN);
	}

	static List<Map<String, Object>> goals(Map<String, Object> results) {
		List<Map<String, Object>> goals = new ArrayList<>();
		if (!rows(results, "gate").isEmpty()) {
			double leader = gate(results, "onlyOnLeaderOnLeader");
			double follower = gate(results, "onlyOnLeaderOnFollower");
			goal(goals, "Gate under 50 ns per call (leader)", leader < 50, fmt("%.1f ns", leader));
			goal(goals, "Gate under 50 ns per call (follower)", follower < 50, fmt("%.1f ns", follower));
			// Like for like: on the node that runs the job, our leader call against a
			// ShedLock call that takes the lock, runs and releases it; elsewhere, our
			// follower call against a ShedLock call that finds the lock held.
			for (String database : List.of("H2", "MariaDb")) {
				for (String[] pair : List.of(new String[] { "leader", "Runs" }, new String[] { "follower", "Skips" })) {
					double ours = pair[0].equals("leader") ? leader : follower;
					String shed = "shedLock" + database + pair[1];
					double ratio = gate(results, shed) / ours;
					if (Double.isNaN(ratio)) {
						continue;
					}
					goal(goals, "Gate at least 1,000x cheaper than ShedLock (" + pair[0] + " call vs " + shed + ")",
							ratio >= 1000, fmt("%.0fx", ratio));
				}
			}
		}
		Timing timing = Timing.FAILOVER;
		for (Map<String, Object> row : rows(results, "failover")) {
			String id = (String) row.get("contender");
			if (!id.startsWith("ours-")) {
				continue;
			}
			Map<String, Object> crash = map(row.get("crash"));
			double p99 = number(crash.get("p99Ms"));
			goal(goals,
					"Crash failover p99 within lease + 1.2 x retry + 100 ms = " + fmt("%.0f ms", timing.crashBoundMs())
							+ " (" + id + ")",
					p99 <= timing.crashBoundMs(), fmt("p99 %.0f ms", p99) + trialsNote(crash));
			Map<String, Object> graceful = map(row.get("graceful"));
			double p50 = number(graceful.get("p50Ms"));
			boolean pushStore = id.endsWith("redis") || id.endsWith("zookeeper") || id.endsWith("postgresql")
					|| id.endsWith("etcd");
			double limit = pushStore ? 50 : timing.retryMs();
			goal(goals, "Graceful handover p50 under " + fmt("%.0f ms", limit) + " (" + id + ")", p50 < limit,
					fmt("p50 %.0f ms", p50) + trialsNote(graceful));
		}
		List<Map<String, Object>> load = rows(results, "storeLoad");
		for (Map<String, Object> row : load) {
			String id = (String) row.get("contender");
			if (!id.startsWith("ours-")) {
				continue;
			}
			double per = number(row.get("perCandidatePerPeriod"));
			goal(goals, "At most one store request per retry-period per candidate per group (" + id + ")", per <= 1.0,
					fmt("%.2f", per));
			String store = id.substring(5);
			find(load, "contender", "si-" + store).ifPresent((si) -> {
				double ratio = number(si.get("requestsPerSecond")) / number(row.get("requestsPerSecond"));
				goal(goals, "Far below Spring Integration's polling (" + store + ")", ratio >= 5,
						fmt("SI sends %.1fx as many requests", ratio));
			});
		}
		List<Map<String, Object>> scale = rows(results, "scale");
		for (Map<String, Object> many : scale) {
			String id = (String) many.get("contender");
			if (!id.startsWith("ours-") || number(many.get("groups")) < 1000) {
				continue;
			}
			scale.stream()
				.filter((r) -> id.equals(r.get("contender")) && number(r.get("groups")) < 100)
				.findFirst()
				.ifPresent((few) -> {
					String a = electionThreads(few);
					String b = electionThreads(many);
					goal(goals, "Election threads per node do not grow with groups (" + id + ", 10 vs 1,000 groups)",
							a.equals(b), a + " vs " + b);
				});
		}
		for (Map<String, Object> row : scale) {
			String id = (String) row.get("contender");
			if (!id.startsWith("ours-") || number(row.get("groups")) < 10000) {
				continue;
			}
			String groups = fmt("%,d groups", (int) number(row.get("groups")));
			double all = number(row.get("timeUntilAllLedMs"));
			double bound = 2 * Timing.DEFAULTS.retryMs();
			goal(goals,
					"Every group led within 2 retry periods = " + fmt("%.0f ms", bound) + " (" + id + ", " + groups
							+ ")",
					all <= bound, Double.isNaN(all) ? "not all led: " + row.get("groupsLed") : fmt("%,.0f ms", all));
			double perNode = number(row.get("serverRequestsPerSecondPerNode"));
			goal(goals, "At most 2 store requests per second per node at the server (" + id + ", " + groups + ")",
					perNode <= 2, fmt("%.1f/s", perNode));
		}
		for (Map<String, Object> row : rows(results, "balance")) {
			String id = (String) row.get("contender");
			List<?> joins = (List<?>) row.getOrDefault("joins", List.of());
			if (!joins.isEmpty()) {
				Map<String, Object> last = map(joins.get(joins.size() - 1));
				double periods = number(last.get("periods"));
				goal(goals, "Spread at most 1 within 5 retry periods of the last join (" + id + ")", periods <= 5,
						Double.isNaN(periods) ? "not within " + Balance.MAX_PERIODS + " periods"
								: fmt("%.1f periods", periods));
				int groups = (int) number(row.get("groups"));
				int ceil = (int) Math.ceil(groups / number(row.get("nodes")));
				double moved = number(last.get("moved"));
				goal(goals, "At most ceil(G/C) = " + ceil + " groups moved when the last node joined (" + id + ")",
						moved <= ceil, fmt("%.0f moved", moved));
			}
			Map<String, Object> kill = map(row.get("kill"));
			if (!kill.isEmpty()) {
				double all = number(kill.get("allLedAgainAfterMs"));
				double bound = number(kill.get("boundMs"));
				goal(goals, "Every group led again within lease + retry = " + fmt("%.0f ms", bound) + " of a kill -9 ("
						+ id + ")", all <= bound, Double.isNaN(all) ? "not all led" : fmt("%,.0f ms", all));
				double periods = number(kill.get("periodsAfterAllLed"));
				goal(goals, "Spread at most 1 within 5 more retry periods after the kill (" + id + ")", periods <= 5,
						Double.isNaN(periods) ? "not within " + Balance.MAX_PERIODS + " periods"
								: fmt("%.1f periods after every group was led again (%.1f after the kill)", periods,
										number(kill.get("periodsAfterKill"))));
			}
		}
		for (Map<String, Object> row : rows(results, "runs")) {
			Map<String, Object> shedLock = map(row.get("shedLock"));
			if (shedLock.isEmpty()) {
				continue;
			}
			double ours = number(map(row.get("ours")).get("meanMs"));
			double theirs = number(shedLock.get("meanMs"));
			goal(goals, "A run's claim and record cost at most ShedLock's lock and unlock (" + row.get("label")
					+ ", mean per run)", ours <= theirs, fmt("%.3f ms vs %.3f ms", ours, theirs));
		}
		return goals;
	}

	private static String trialsNote(Map<String, Object> trials) {
		Object failures = trials.get("failures");
		int failed = (failures instanceof List<?> list) ? list.size() : 0;
		return fmt(" over %d trials", (int) number(trials.get("trials")))
				+ ((failed > 0) ? ", " + failed + " failed" : "");
	}

	private static String electionThreads(Map<String, Object> scaleRow) {
		List<String> counts = new ArrayList<>();
		for (Object node : (List<?>) scaleRow.get("perNode")) {
			counts.add(String.valueOf(map(node).get("electionThreads")));
		}
		return String.join("/", counts);
	}

	private static void goal(List<Map<String, Object>> goals, String goal, boolean met, String measured) {
		Map<String, Object> row = new LinkedHashMap<>();
		row.put("goal", goal);
		row.put("met", met);
		row.put("measured", measured);
		goals.add(row);
	}

	static String fmt(String format, Object... args) {
		return String.format(Locale.ROOT, format, args);
	}

	static String markdown(Map<String, Object> results) {
		StringBuilder md = new StringBuilder();
		md.append("Mode: **")
			.append(results.get("mode"))
			.append("**, started ")
			.append(results.get("started"))
			.append(", took ")
			.append(fmt("%.0f s", number(results.get("durationSeconds"))))
			.append(".\n\n");
		List<Map<String, Object>> gate = rows(results, "gate");
		if (!gate.isEmpty()) {
			double h2 = gate(results, "shedLockH2Runs");
			double maria = gate(results, "shedLockMariaDbRuns");
			md.append("### 1. Gate cost (JMH, ns per call)\n\n");
			md.append(
					"| call | ns per call | ± (99.9 %) | ShedLock H2 (runs) ÷ this | ShedLock MariaDB (runs) ÷ this |\n");
			md.append("|---|---:|---:|---:|---:|\n");
			for (Map<String, Object> row : gate) {
				double ns = number(row.get("nsPerCall"));
				md.append("| `")
					.append(row.get("benchmark"))
					.append("` | ")
					.append(fmt("%,.1f", ns))
					.append(" | ")
					.append(ms1(row.get("error99")))
					.append(" | ")
					.append(fmt("%,.0f", h2 / ns))
					.append(" | ")
					.append(fmt("%,.0f", maria / ns))
					.append(" |\n");
			}
			md.append('\n');
		}
		List<Map<String, Object>> failover = rows(results, "failover");
		if (!failover.isEmpty()) {
			md.append("### 2. Failover (ms; ").append(Timing.FAILOVER).append(")\n\n");
			md.append("| contender | crash p50 | crash p99 | crash max | crash bound | graceful p50 | graceful p99 | "
					+ "graceful max | of which the leader's own stop (p50) | trials (crash/graceful) |\n");
			md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
			for (Map<String, Object> row : failover) {
				Map<String, Object> crash = map(row.get("crash"));
				Map<String, Object> graceful = map(row.get("graceful"));
				md.append("| ")
					.append(row.get("label"))
					.append(" | ")
					.append(ms(crash.get("p50Ms")))
					.append(" | ")
					.append(ms(crash.get("p99Ms")))
					.append(" | ")
					.append(ms(crash.get("maxMs")))
					.append(" | ")
					.append(fmt("%.0f", Timing.FAILOVER.crashBoundMs()))
					.append(" | ")
					.append(ms(graceful.get("p50Ms")))
					.append(" | ")
					.append(ms(graceful.get("p99Ms")))
					.append(" | ")
					.append(ms(graceful.get("maxMs")))
					.append(" | ")
					.append(ms(graceful.get("leaderStopP50Ms")))
					.append(" | ")
					.append(trials(crash))
					.append(" / ")
					.append(trials(graceful))
					.append(" |\n");
			}
			md.append('\n');
		}
		List<Map<String, Object>> load = rows(results, "storeLoad");
		if (!load.isEmpty()) {
			md.append("### 3. Store load (1 leader + 4 followers, one group, steady state)\n\n");
			md.append(
					"| contender | requests/s at the server | per candidate per period | period | client store calls/s "
							+ "| own sampling subtracted (/s) | counted as |\n");
			md.append("|---|---:|---:|---:|---:|---:|---|\n");
			for (Map<String, Object> row : load) {
				md.append("| ")
					.append(row.get("label"))
					.append(" | ")
					.append(fmt("%.1f", number(row.get("requestsPerSecond"))))
					.append(" | ")
					.append(fmt("%.2f", number(row.get("perCandidatePerPeriod"))))
					.append(" | ")
					.append(fmt("%.0f ms", number(row.get("periodMs"))))
					.append(" | ")
					.append(row.get("clientCallsPerSecond") == null ? "n/a"
							: fmt("%.1f", number(row.get("clientCallsPerSecond"))))
					.append(" | ")
					.append(fmt("%.1f", number(row.get("baselinePerSecond"))))
					.append(" | ")
					.append(row.get("counter"))
					.append(" |\n");
			}
			md.append('\n');
		}
		List<Map<String, Object>> scale = rows(results, "scale");
		if (!scale.isEmpty()) {
			md.append("### 4. Scale (3 nodes, ").append(Timing.DEFAULTS).append(")\n\n");
			md.append(
					"| contender | groups | all led after | threads per node | election threads per node | CPU per node "
							+ "| heap after GC per node | server requests/s per node | client store calls/s per node |\n");
			md.append("|---|---:|---:|---|---|---|---|---:|---|\n");
			for (Map<String, Object> row : scale) {
				List<String> threads = new ArrayList<>();
				List<String> election = new ArrayList<>();
				List<String> cpu = new ArrayList<>();
				List<String> heap = new ArrayList<>();
				List<String> calls = new ArrayList<>();
				for (Object n : (List<?>) row.getOrDefault("perNode", List.of())) {
					Map<String, Object> node = map(n);
					threads.add(String.valueOf(node.get("threads")));
					election.add(String.valueOf(node.get("electionThreads")));
					cpu.add(fmt("%.1f %%", number(node.get("cpuPercent"))));
					heap.add(fmt("%.0f MB", number(node.get("heapAfterGcMb"))));
					calls.add(node.get("clientStoreCallsPerSecond") == null ? "n/a"
							: fmt("%.0f", number(node.get("clientStoreCallsPerSecond"))));
				}
				Object all = row.get("timeUntilAllLedMs");
				md.append("| ")
					.append(row.get("label"))
					.append(" | ")
					.append(fmt("%,d", (int) number(row.get("groups"))))
					.append(" | ")
					.append((all == null) ? "not all (" + row.get("groupsLed") + ")" : fmt("%,.0f ms", number(all)))
					.append(" | ")
					.append(String.join(" / ", threads))
					.append(" | ")
					.append(String.join(" / ", election))
					.append(" | ")
					.append(String.join(" / ", cpu))
					.append(" | ")
					.append(String.join(" / ", heap))
					.append(" | ")
					.append(fmt("%.0f", number(row.get("serverRequestsPerSecondPerNode"))))
					.append(" | ")
					.append(String.join(" / ", calls))
					.append(" |\n");
			}
			md.append('\n');
		}
		List<Map<String, Object>> balance = rows(results, "balance");
		if (!balance.isEmpty()) {
			md.append("### 5. Balancing (").append(Timing.DEFAULTS).append(")\n\n");
			md.append("| contender | event | live nodes | retry periods until spread <= 1 | groups moved | groups led "
					+ "per node after |\n|---|---|---:|---:|---:|---|\n");
			for (Map<String, Object> row : balance) {
				for (Object j : (List<?>) row.getOrDefault("joins", List.of())) {
					Map<String, Object> join = map(j);
					md.append("| ")
						.append(row.get("label"))
						.append(" | ")
						.append(join.get("node"))
						.append(" joins | ")
						.append(join.get("liveNodes"))
						.append(" | ")
						.append(join.get("periods") == null ? "not settled" : fmt("%.1f", number(join.get("periods"))))
						.append(" | ")
						.append(join.get("moved"))
						.append(" | ")
						.append(join.get("ledAfter"))
						.append(" |\n");
				}
				Map<String, Object> kill = map(row.get("kill"));
				if (!kill.isEmpty()) {
					md.append("| ")
						.append(row.get("label"))
						.append(" | kill -9 ")
						.append(kill.get("node"))
						.append(" (led ")
						.append(kill.get("itLed"))
						.append("): every group led again after ")
						.append(ms(kill.get("allLedAgainAfterMs")))
						.append(" ms | ")
						.append(map(kill).containsKey("ledAfter") ? map(kill.get("ledAfter")).size() : "?")
						.append(" | ")
						.append(kill.get("periodsAfterAllLed") == null ? "not settled"
								: fmt("%.1f after all led (%.1f after the kill)",
										number(kill.get("periodsAfterAllLed")), number(kill.get("periodsAfterKill"))))
						.append(" | ")
						.append(kill.get("moved"))
						.append(" | ")
						.append(kill.get("ledAfter"))
						.append(" |\n");
				}
			}
			md.append('\n');
		}
		List<Map<String, Object>> runs = rows(results, "runs");
		if (!runs.isEmpty()) {
			md.append("### 6. Run records: cost per run (one leader, runs one after another; ")
				.append(Timing.DEFAULTS)
				.append(")\n\n");
			md.append("| store | who | per run: mean / p50 / p99 (ms) | runs/s | server requests per run | runs "
					+ "refused |\n|---|---|---|---:|---:|---:|\n");
			for (Map<String, Object> row : runs) {
				runRow(md, row.get("label"), "this starter: claim + finish", map(row.get("ours")));
				Map<String, Object> shedLock = map(row.get("shedLock"));
				if (shedLock.isEmpty()) {
					md.append("| ")
						.append(row.get("label"))
						.append(" | ShedLock: lock + unlock | not measured: ")
						.append(row.get("shedLockNote"))
						.append(" | | | |\n");
				}
				else {
					runRow(md, row.get("label"), "ShedLock: lock + unlock", shedLock);
				}
			}
			md.append('\n');
		}
		List<Map<String, Object>> goals = rows(results, "goals");
		if (!goals.isEmpty()) {
			md.append("### Goals\n\n| goal | met | measured |\n|---|---|---|\n");
			for (Map<String, Object> goal : goals) {
				md.append("| ")
					.append(goal.get("goal"))
					.append(" | ")
					.append(Boolean.TRUE.equals(goal.get("met")) ? "met" : "**not met**")
					.append(" | ")
					.append(goal.get("measured"))
					.append(" |\n");
			}
			md.append('\n');
		}
		md.append(
				"### Machine load during each section (`uptime`)\n\n| section | before | after | seconds |\n|---|---|---|---:|\n");
		for (Map<String, Object> entry : rows(results, "uptime")) {
			md.append("| ")
				.append(entry.get("section"))
				.append(entry.containsKey("error") ? " (FAILED: " + entry.get("error") + ")" : "")
				.append(" | ")
				.append(loadAverage(entry.get("before")))
				.append(" | ")
				.append(loadAverage(entry.get("after")))
				.append(" | ")
				.append(fmt("%.0f", number(entry.get("seconds"))))
				.append(" |\n");
		}
		return md.toString();
	}

	private static void runRow(StringBuilder md, Object store, String who, Map<String, Object> figures) {
		double requests = number(figures.get("serverRequestsPerRun"));
		md.append("| ")
			.append(store)
			.append(" | ")
			.append(who)
			.append(" | ")
			.append(fmt("%.3f / %.3f / %.3f", number(figures.get("meanMs")), number(figures.get("p50Ms")),
					number(figures.get("p99Ms"))))
			.append(" | ")
			.append(fmt("%,.0f", number(figures.get("runsPerSecond"))))
			.append(" | ")
			.append(Double.isNaN(requests) ? "not counted" : fmt("%.2f", requests))
			.append(" | ")
			.append(figures.get("refused"))
			.append(" |\n");
	}

	private static String loadAverage(Object uptime) {
		String text = String.valueOf(uptime);
		int at = text.indexOf("load average:");
		return (at >= 0) ? text.substring(at + 14).trim() : text;
	}

	private static String ms1(Object value) {
		double v = number(value);
		return Double.isNaN(v) ? "–" : fmt("%,.1f", v);
	}

	private static String ms(Object value) {
		double v = number(value);
		return Double.isNaN(v) ? "–" : fmt("%,.0f", v);
	}

	private static String trials(Map<String, Object> trials) {
		Object failures = trials.get("failures");
		int failed = (failures instanceof List<?> list) ? list.size() : 0;
		return (int) number(trials.get("trials")) + ((failed > 0) ? " (+" + failed + " failed)" : "");
	}

}
