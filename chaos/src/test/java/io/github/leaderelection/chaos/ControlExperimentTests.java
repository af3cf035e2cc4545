package io.github.leaderelection.chaos;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The control experiments, which prove that the checker can fail: nodes that trust a flag
 * flipped by the granted and revoked events (as the seed code does) instead of asking
 * {@code isLeader()}, and write without fencing, are paused past their lease. The new
 * leader takes over while the old one sleeps, and the old one wakes up still believing
 * until its revoked event arrives: the checker must report overlapping beliefs. This test
 * passes when it does.
 */
@Execution(ExecutionMode.CONCURRENT)
class ControlExperimentTests {

	@Test
	void nodesTrustingAnEventFlagOverlapWhenPausedPastTheirLease() throws Exception {
		ChaosSummary summary = new ChaosRun(ChaosSettings.control(Backend.JDBC_MARIADB, 7, 2, ChaosTests.OUTPUT)).run();
		assertThat(summary.faults()).containsOnlyKeys(FaultType.STOP_LEADER.id());
		assertThat(summary.overlaps()).as(summary.table()).isPositive();
		assertThat(summary.passed()).isFalse();
	}

	/**
	 * The job control: the same nodes, whose leader-only job claims nothing in the run
	 * records and runs whenever the node's flag says it leads. The leader paused past its
	 * lease wakes still believing and runs the seconds it slept through, which the new
	 * leader ran from its grant on: the work checker must see ticks run twice.
	 */
	@Test
	void aJobThatDoesNotClaimItsTicksRunsSomeTwiceWhenItsLeaderIsPausedPastItsLease() throws Exception {
		ChaosSummary summary = new ChaosRun(ChaosSettings.jobControl(Backend.JDBC_MARIADB, 7, 3, ChaosTests.OUTPUT))
			.run();
		assertThat(summary.faults()).containsOnlyKeys(FaultType.STOP_LEADER.id());
		assertThat(summary.settings().runRecords()).isFalse();
		assertThat(summary.work().duplicates()).as(summary.table()).isPositive();
		assertThat(summary.violations()).as(summary.table()).anyMatch((violation) -> violation.contains("run twice"));
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
