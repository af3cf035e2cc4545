package io.github.leaderelection.benchmarks;

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

}
