package io.github.leaderelection.engine;

import java.time.Duration;

import io.github.leaderelection.engine.DuplicateIdDetector.Finding;
import io.github.leaderelection.spi.Lease;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DuplicateIdDetectorTests {

	private static final long WINDOW = Duration.ofSeconds(30).toNanos();

	private final DuplicateIdDetector detector = new DuplicateIdDetector("orders", "a", WINDOW);

	@Test
	void aNewerTermUnderThisIdSeenTwiceWithinTheWindowIsAnotherProcess() {
		this.detector.acquired(5);
		// Once: an administrator may have forced this very candidate.
		assertThat(this.detector.observe(live(6), 0, true)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.conflict()).isNull();
		assertThat(this.detector.observe(live(7), WINDOW - 1, true)).isEqualTo(Finding.CONFLICT_STARTED);
		assertThat(this.detector.conflict()).contains("another process uses candidate id 'a'").contains("term 7");
		assertThat(this.detector.observe(live(7), WINDOW, true)).isEqualTo(Finding.NOTHING);
		// The other process's lease is gone: compete again.
		assertThat(this.detector.observe(null, WINDOW + 1, true)).isEqualTo(Finding.CONFLICT_ENDED);
		assertThat(this.detector.conflict()).isNull();
	}

	@Test
	void termsSeenFurtherApartThanTheWindowOrBeforeAnyAcquireAreNotADuplicate() {
		assertThat(this.detector.observe(live(6), 0, true)).isEqualTo(Finding.NOTHING);
		// A restart's own old lease.
		assertThat(this.detector.observe(live(7), 1, true)).isEqualTo(Finding.NOTHING);
		this.detector.acquired(8);
		assertThat(this.detector.observe(live(9), 0, true)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.observe(live(10), WINDOW, true)).isEqualTo(Finding.NOTHING);
		// Its own term.
		assertThat(this.detector.observe(live(8), WINDOW + 1, true)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.conflict()).isNull();
	}

	@Test
	void newerTermsUnderThisIdSeenAsAFollowerAreAnAdministratorsForces() {
		this.detector.acquired(5);
		assertThat(this.detector.observe(live(6), 0, false)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.observe(live(7), 1, false)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.observe(live(9), 2, false)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.conflict()).isNull();
	}

	private static Lease live(long term) {
		return new Lease("orders", "a", term, Duration.ofSeconds(10), Duration.ZERO);
	}

}
