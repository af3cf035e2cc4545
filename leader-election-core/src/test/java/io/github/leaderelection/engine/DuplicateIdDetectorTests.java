package io.github.leaderelection.engine;

import java.time.Duration;

import io.github.leaderelection.engine.DuplicateIdDetector.Finding;
import io.github.leaderelection.spi.Lease;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DuplicateIdDetectorTests {

	private static final long RETRY = Duration.ofSeconds(2).toNanos();

	private final DuplicateIdDetector detector = new DuplicateIdDetector("orders", "a", RETRY);

	@Test
	void aNewerTermUnderThisIdRenewedByAnotherProcessIsAConflict() {
		this.detector.acquired(5);
		// After a refusal: a suspect, left alone while it is watched.
		assertThat(this.detector.observe(live(6, 10), 0, true)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.conflict()).isNull();
		assertThat(this.detector.holdsOff(live(6, 10), RETRY)).isTrue();
		// A retry period later its end has moved with a renewal.
		assertThat(this.detector.observe(live(6, 10), RETRY, false)).isEqualTo(Finding.CONFLICT_STARTED);
		assertThat(this.detector.conflict()).contains("another process uses candidate id 'a'").contains("term 6");
		assertThat(this.detector.observe(live(6, 10), 2 * RETRY, false)).isEqualTo(Finding.NOTHING);
		// The other process's lease is gone: compete again.
		assertThat(this.detector.observe(null, 3 * RETRY, false)).isEqualTo(Finding.CONFLICT_ENDED);
		assertThat(this.detector.conflict()).isNull();
	}

	@Test
	void aNewerTermUnderThisIdThatNobodyRenewsIsAnOperatorsForceAndIsTakenAfterTheWatch() {
		this.detector.acquired(5);
		assertThat(this.detector.observe(live(6, 10), 0, true)).isEqualTo(Finding.NOTHING);
		// Its end stays where it was: nobody renews it.
		assertThat(this.detector.observe(live(6, 8), RETRY, false)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.observe(live(6, 6), 2 * RETRY, false)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.holdsOff(live(6, 6), 2 * RETRY)).isTrue();
		assertThat(this.detector.holdsOff(live(6, 4), 3 * RETRY)).isFalse();
		this.detector.acquired(7);
		assertThat(this.detector.holdsOff(live(6, 8), RETRY)).isFalse();
		assertThat(this.detector.conflict()).isNull();
	}

	@Test
	void termsSeenBeforeAnyAcquireOrOwnTermsAreNotADuplicate() {
		assertThat(this.detector.observe(live(6, 10), 0, true)).isEqualTo(Finding.NOTHING);
		// A restart's own old lease.
		assertThat(this.detector.observe(live(6, 20), RETRY, true)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.holdsOff(live(6, 20), RETRY)).isFalse();
		this.detector.acquired(8);
		// Its own term.
		assertThat(this.detector.observe(live(8, 10), RETRY, true)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.observe(live(8, 20), 2 * RETRY, true)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.conflict()).isNull();
	}

	@Test
	void newerTermsUnderThisIdSeenAsAFollowerAreAnAdministratorsForces() {
		this.detector.acquired(5);
		assertThat(this.detector.observe(live(6, 10), 0, false)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.observe(live(6, 20), RETRY, false)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.observe(live(7, 10), 2 * RETRY, false)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.observe(live(9, 20), 3 * RETRY, false)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.holdsOff(live(9, 20), 3 * RETRY)).isFalse();
		assertThat(this.detector.conflict()).isNull();
	}

	@Test
	void aLeaseItsHolderMayNotActOnBeforeItEndsIsNotJudgedByItsEnd() {
		this.detector.acquired(5);
		// ZooKeeper's forced lease: it reads as a whole lease duration, whoever renews.
		Lease forced = new Lease("orders", "a", 6, Duration.ofSeconds(10), Duration.ofSeconds(10));
		assertThat(this.detector.observe(forced, 0, true)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.observe(forced, RETRY, false)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.observe(forced, 2 * RETRY, false)).isEqualTo(Finding.NOTHING);
		assertThat(this.detector.conflict()).isNull();
	}

	/** A live lease under this id, ending in the given seconds from the read. */
	private static Lease live(long term, long secondsLeft) {
		return new Lease("orders", "a", term, Duration.ofSeconds(secondsLeft), Duration.ZERO);
	}

}
