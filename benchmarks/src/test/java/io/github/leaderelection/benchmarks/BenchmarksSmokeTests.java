package io.github.leaderelection.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fast check of the harness's own logic; the benchmarks themselves run only from the
 * jar.
 */
class BenchmarksSmokeTests {

	@Test
	void percentilesAreNearestRank() {
		List<Double> twenty = new java.util.ArrayList<>();
		for (int i = 1; i <= 20; i++) {
			twenty.add((double) i);
		}
		assertThat(Stats.percentile(twenty, 50)).isEqualTo(10.0);
		assertThat(Stats.percentile(twenty, 99)).isEqualTo(20.0);
		assertThat(Stats.percentile(List.of(), 50)).isNaN();
	}

	@Test
	void contendersParseFromTheirIds() {
		assertThat(Contender.parse("ours-mariadb")).isEqualTo(new Contender(Contender.Kind.OURS, Store.MARIADB));
		assertThat(Contender.parse("si-zookeeper").label()).isEqualTo("SI LeaderInitiator / ZooKeeper");
		assertThat(Contender.parse("seed-mariadb").id()).isEqualTo("seed-mariadb");
		for (String id : Benchmarks.FAILOVER) {
			assertThat(Contender.parse(id).id()).isEqualTo(id);
		}
	}

	@Test
	void timingMatchesTheGoalsFormula() {
		assertThat(Timing.FAILOVER.crashBoundMs()).isEqualTo(3000 + 1.2 * 500 + 100);
		assertThat(Timing.parse(Timing.DEFAULTS.args())).isEqualTo(Timing.DEFAULTS);
		assertThat(Timing.DEFAULTS.election().retryPeriod().toMillis()).isEqualTo(2000);
	}

	@Test
	void threadFamiliesDropPoolNumbers() {
		assertThat(NodeMain.family("leader-election-store-2")).isEqualTo("leader-election-store");
		assertThat(NodeMain.family("lock-leadership-17")).isEqualTo("lock-leadership");
		assertThat(Scale.electionThreads(Contender.parse("ours-redis"),
				"leader-election-events:1,leader-election-store:2,leader-election-timer:1,main:1,"))
			.isEqualTo(4);
	}

	@Test
	void writesJsonAndTheGoalsTable() {
		Map<String, Object> results = new LinkedHashMap<>();
		results.put("mode", "quick");
		results.put("gate",
				List.of(Map.of("benchmark", "onlyOnLeaderOnLeader", "nsPerCall", 40.0, "error99", Double.NaN),
						Map.of("benchmark", "onlyOnLeaderOnFollower", "nsPerCall", 30.0),
						Map.of("benchmark", "shedLockH2Runs", "nsPerCall", 80000.0)));
		results.put("goals", Report.goals(results));
		String json = Json.write(results);
		assertThat(json).contains("\"mode\": \"quick\"").contains("\"error99\": null").contains("\"met\": true");
		assertThat(Report.markdown(results)).contains("| Gate under 50 ns per call (leader) | met | 40.0 ns |")
			.contains("| Gate at least 1,000x cheaper than ShedLock (leader call vs shedLockH2Runs) | met | 2000x |");
	}

	private static Runs.Side side(List<String> order, String name, int refuseEvery) {
		int[] calls = { 0 };
		return new Runs.Side() {

			@Override
			public boolean run() {
				order.add(name);
				return ++calls[0] % refuseEvery != 0;
			}

			@Override
			public void close() {
			}

		};
	}

	@Test
	void runsAreTimedOneByOneAndSetBesideShedLock() throws Exception {
		List<String> order = new ArrayList<>();
		Runs.Side a = side(order, "a", 5);
		Runs.Side b = side(order, "b", 1000);
		List<Map<String, Object>> figures = Runs.time(List.of(a, b), 3, 120);
		// 3 warm-up runs each, then blocks of 50 that alternate, b first in the second
		// round.
		assertThat(order).hasSize(246);
		assertThat(order.subList(6, 56)).containsOnly("a");
		assertThat(order.subList(56, 106)).containsOnly("b");
		assertThat(order.subList(106, 156)).containsOnly("b");
		assertThat(order.subList(206, 226)).containsOnly("a");
		assertThat(figures.get(0).get("refused")).isEqualTo(24);
		assertThat(figures.get(1).get("refused")).isEqualTo(0);
		assertThat((Double) figures.get(0).get("p99Ms")).isGreaterThanOrEqualTo((Double) figures.get(0).get("p50Ms"));
		// H2's requests are not counted, so no server is needed.
		assertThat(Runs.requestsPerRun(Store.H2, () -> a, 10)).isNaN();
		assertThat(Runs.shedLockMissing(Store.ETCD)).isNotNull();
		assertThat(Runs.shedLockMissing(Store.REDIS)).isNull();
		Map<String, Object> results = new LinkedHashMap<>();
		Map<String, Object> mariadb = new LinkedHashMap<>();
		mariadb.put("label", "MariaDB");
		mariadb.put("ours", Runs.figures(List.of(1.0, 2.0), 0.003, 0, 4.0));
		mariadb.put("shedLock", Runs.figures(List.of(0.5, 0.5), 0.001, 0, 2.0));
		Map<String, Object> etcd = new LinkedHashMap<>();
		etcd.put("label", "etcd");
		etcd.put("ours", Runs.figures(List.of(1.0), 0.001, 0, 3.0));
		etcd.put("shedLock", null);
		etcd.put("shedLockNote", Runs.shedLockMissing(Store.ETCD));
		results.put("runs", List.of(mariadb, etcd));
		results.put("goals", Report.goals(results));
		assertThat(Report.markdown(results))
			.contains("| MariaDB | this starter: claim + finish | 1.500 / 1.000 / 2.000 | 667 | 4.00 | 0 |")
			.contains("| etcd | ShedLock: lock + unlock | not measured: ")
			.contains("| A run's claim and record cost at most ShedLock's lock and unlock (MariaDB, mean per run) "
					+ "| **not met** | 1.500 ms vs 0.500 ms |");
	}

}
