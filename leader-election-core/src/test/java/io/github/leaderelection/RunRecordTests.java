package io.github.leaderelection;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RunRecord}: the rule every store applies to a claim.
 */
class RunRecordTests {

	private static final Instant STARTED = Instant.parse("2026-11-28T02:00:00Z");

	@Test
	void aRunMayFollowNothingAndOnlyALastRunOfAnEarlierTickInNoLaterTerm() {
		RunRecord last = run(60_000, 5);
		assertThat(run(0, 1).mayFollow(null, Duration.ofHours(1))).isTrue();
		assertThat(run(120_000, 5).mayFollow(last, Duration.ZERO)).isTrue();
		assertThat(run(120_000, 6).mayFollow(last, Duration.ZERO)).isTrue();
		assertThat(run(60_000, 6).mayFollow(last, Duration.ZERO)).as("the same tick").isFalse();
		assertThat(run(30_000, 6).mayFollow(last, Duration.ZERO)).as("an earlier tick").isFalse();
		assertThat(run(120_000, 4).mayFollow(last, Duration.ZERO)).as("an older term").isFalse();
	}

	@Test
	void aRunMayFollowOnlyAtLeastTheMinimumIntervalAfterTheLastTick() {
		RunRecord last = run(60_000, 5);
		assertThat(run(69_999, 5).mayFollow(last, Duration.ofSeconds(10))).isFalse();
		assertThat(run(70_000, 5).mayFollow(last, Duration.ofSeconds(10))).isTrue();
	}

	@Test
	void theSameRunIsTheSameTickHolderAndTermWhateverItsEnd() {
		RunRecord run = run(60_000, 5);
		assertThat(run.endedAs(RunOutcome.FAILED, STARTED.plusSeconds(1)).isSameRunAs(run)).isTrue();
		assertThat(run(60_000, 6).isSameRunAs(run)).isFalse();
		assertThat(run(60_001, 5).isSameRunAs(run)).isFalse();
	}

	private static RunRecord run(long tick, long term) {
		return new RunRecord("orders", "report", tick, "a", term, STARTED, null, RunOutcome.RUNNING);
	}

}
