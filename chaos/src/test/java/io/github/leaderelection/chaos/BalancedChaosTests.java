package io.github.leaderelection.chaos;

import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The short seeded run with many groups and balancing on: every node joins
 * {@value #GROUPS} groups and spreads their leadership over the live candidates, so that
 * leadership moves by hand-overs while the faults hit, and every group is checked on its
 * own (overlaps, terms, actions, leaderless intervals: see {@link Checker}). On the
 * cheapest stores, with fewer faults than {@link ChaosTests}, to keep the default build
 * within a couple of minutes more; {@code -Pchaos -Dchaos.groups=20 -Dchaos.balance=true}
 * runs any store as long as wanted.
 */
@Execution(ExecutionMode.CONCURRENT)
class BalancedChaosTests {

	static final int GROUPS = 20;

	static final int FAULTS = 10;

	@ParameterizedTest(name = "{0}")
	@EnumSource(names = { "REDIS", "ZOOKEEPER" })
	void shortRunWithManyBalancedGroupsKeepsEveryPromiseInEveryGroup(Backend backend) throws Exception {
		ChaosSettings settings = ChaosSettings
			.safe(backend, ChaosTests.seed(ChaosTests.DEFAULT_SEED), null, FAULTS, ChaosTests.OUTPUT)
			.withGroups(GROUPS, true)
			.withFaultTypes(ChaosTests.shortRunFaultTypes(backend));
		ChaosSummary summary = new ChaosRun(settings).run();
		ChaosTests.assertKeptEveryPromise(summary);
		assertThat(summary.faultCount()).as("faults injected").isGreaterThanOrEqualTo(FAULTS);
		assertThat(summary.handOvers()).as("hand-overs\n" + summary.table()).isPositive();
	}

}
