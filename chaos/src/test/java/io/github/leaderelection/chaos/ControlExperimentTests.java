package io.github.leaderelection.chaos;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The control experiments, which prove that the checker can fail: nodes that trust a flag
 * flipped by the granted and revoked events (as the seed code does) instead of asking
 * {@code isLeader()}, and write without fencing, are paused past their lease. The new
 * leader takes over while the old one sleeps, and the old one wakes up still believing
 * until its revoked event arrives: the checker must report overlapping beliefs. This test
 * passes when it does.
 */
class ControlExperimentTests {

	@Test
	void nodesTrustingAnEventFlagOverlapWhenPausedPastTheirLease() throws Exception {
		ChaosSummary summary = new ChaosRun(ChaosSettings.control(Backend.JDBC_MARIADB, 7, 2, ChaosTests.OUTPUT)).run();
		assertThat(summary.faults()).containsOnlyKeys(FaultType.STOP_LEADER.id());
		assertThat(summary.overlaps()).as(summary.table()).isPositive();
		assertThat(summary.passed()).isFalse();
	}

	/**
	 * The clock control: nodes that do everything right, but whose leader's election
	 * clock runs at half the store's rate while its link is cut. A belief of one renew
	 * deadline on that clock outlasts the lease in the store, which is why the README
	 * bounds clock rates by a margin; the checker must see the overlap, and account for
	 * the belief it saw (none unexplained).
	 */
	@Test
	void aLeaderWhoseClockRunsSlowerThanTheMarginAllowsOverlapsItsSuccessor() throws Exception {
		ChaosSummary summary = new ChaosRun(ChaosSettings.clockControl(Backend.JDBC_MARIADB, 7, 2, ChaosTests.OUTPUT))
			.run();
		assertThat(summary.faults()).containsOnlyKeys(FaultType.SKEW_LEADER.id());
		assertThat(summary.overlaps()).as(summary.table()).isPositive();
		assertThat(summary.unexplainedBeliefs()).as(summary.table()).isZero();
		assertThat(summary.passed()).isFalse();
	}

}
