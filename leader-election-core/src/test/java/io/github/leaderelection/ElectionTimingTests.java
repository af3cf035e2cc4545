package io.github.leaderelection;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class ElectionTimingTests {

	@Test
	void defaultsAreClientGosLeaseAndRetryWithARenewDeadlineOfAtMostHalfTheLease() {
		assertThat(ElectionTiming.DEFAULTS)
			.isEqualTo(new ElectionTiming(Duration.ofSeconds(15), Duration.ofSeconds(7), Duration.ofSeconds(2)));
		assertThat(ElectionTiming.DEFAULTS.survivesRestores()).isTrue();
	}

	@Test
	void survivesRestoresOnlyWithALeaseOfAtLeastTwoRenewDeadlines() {
		assertThat(new ElectionTiming(Duration.ofSeconds(14), Duration.ofSeconds(7), Duration.ofSeconds(2))
			.survivesRestores()).isTrue();
		ElectionTiming clientGo = new ElectionTiming(Duration.ofSeconds(15), Duration.ofSeconds(10),
				Duration.ofSeconds(2));
		assertThat(clientGo.survivesRestores()).isFalse();
		assertThat(clientGo.restoreOverlap()).isEqualTo(Duration.ofSeconds(5));
		assertThat(ElectionTiming.DEFAULTS.restoreOverlap()).isZero();
	}

	@Test
	void failsWithClearMessageWhenLeaseIsNotLongerThanRenewDeadline() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ElectionTiming(Duration.ofSeconds(10), Duration.ofSeconds(10), Duration.ofSeconds(2)))
			.withMessage("lease-duration must be greater than renew-deadline, but lease-duration is PT10S and "
					+ "renew-deadline is PT10S");
	}

	@Test
	void failsWithClearMessageWhenRenewDeadlineIsNotLongerThanOnePointTwoRetryPeriods() {
		assertThatIllegalArgumentException()
			.isThrownBy(
					() -> new ElectionTiming(Duration.ofSeconds(15), Duration.ofMillis(2400), Duration.ofSeconds(2)))
			.withMessageContaining("renew-deadline must be greater than 1.2 x retry-period")
			.withMessageContaining("PT2.4S")
			.withMessageContaining("retry-period PT2S");
	}

	@Test
	void acceptsRenewDeadlineJustAboveOnePointTwoRetryPeriods() {
		assertThat(new ElectionTiming(Duration.ofSeconds(15), Duration.ofMillis(2401), Duration.ofSeconds(2))
			.storeCallTimeout()).isEqualTo(Duration.ofSeconds(2));
	}

	@Test
	void failsOnRetryPeriodOfZero() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ElectionTiming(Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ZERO))
			.withMessage("retry-period must be positive but is PT0S");
	}

	@Test
	void failsOnRetryPeriodBelowTheFloorThatAStoreCallNeeds() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new ElectionTiming(Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofMillis(99)))
			.withMessage(
					"retry-period must be at least 100ms (it is also the timeout of every store call) but is PT0.099S");
		assertThat(new ElectionTiming(Duration.ofMillis(600), Duration.ofMillis(400), Duration.ofMillis(100))
			.storeCallTimeout()).isEqualTo(ElectionTiming.MINIMUM_RETRY_PERIOD);
	}

	@Test
	void failsOnNegativeLeaseDurationWithoutBlamingTheRelation() {
		assertThatIllegalArgumentException()
			.isThrownBy(
					() -> new ElectionTiming(Duration.ofSeconds(-15), Duration.ofSeconds(10), Duration.ofSeconds(2)))
			.withMessage("lease-duration must be positive but is PT-15S");
	}

	@Test
	void failsOnNegativeRenewDeadline() {
		assertThatIllegalArgumentException()
			.isThrownBy(
					() -> new ElectionTiming(Duration.ofSeconds(15), Duration.ofSeconds(-10), Duration.ofSeconds(2)))
			.withMessage("renew-deadline must be positive but is PT-10S");
	}

}
