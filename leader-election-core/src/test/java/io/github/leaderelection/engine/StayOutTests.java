package io.github.leaderelection.engine;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class StayOutTests {

	private static final long PERIOD = 100;

	private final StayOut stayOut = new StayOut();

	@Test
	void nobodyStaysOutUntilALeaseIsGivenUp() {
		assertThat(this.stayOut.remaining(0)).isZero();
		assertThat(this.stayOut.nextLook(0, PERIOD)).isZero();
	}

	@Test
	void aCandidateThatGaveALeaseUpLooksInTheRoundsUntilTheLastRetryPeriodThenTriesTheMomentItEnds() {
		this.stayOut.start(1_000, 2 * PERIOD, 7);
		assertThat(this.stayOut.nextLook(1_000, PERIOD)).isEqualTo(StayOut.NOT_NOW);
		assertThat(this.stayOut.nextLook(1_099, PERIOD)).isEqualTo(StayOut.NOT_NOW);
		assertThat(this.stayOut.nextLook(1_100, PERIOD)).isEqualTo(100);
		assertThat(this.stayOut.nextLook(1_150, PERIOD)).isEqualTo(50);
		assertThat(this.stayOut.nextLook(1_200, PERIOD)).isZero();
		assertThat(this.stayOut.remaining(1_300)).isZero();
	}

	@Test
	void aGreaterTermInTheStoreEndsItAndTheTermGivenUpOrAnOlderOneDoesNot() {
		this.stayOut.start(1_000, 2 * PERIOD, 7);
		this.stayOut.sawTerm(6);
		this.stayOut.sawTerm(7);
		assertThat(this.stayOut.remaining(1_000)).isEqualTo(2 * PERIOD);
		this.stayOut.sawTerm(8);
		assertThat(this.stayOut.remaining(1_000)).isZero();
		assertThat(this.stayOut.nextLook(1_000, PERIOD)).isZero();
	}

	@Test
	void aNewStayOutReplacesTheLastOne() {
		this.stayOut.start(1_000, PERIOD, 7);
		this.stayOut.sawTerm(8);
		this.stayOut.start(2_000, PERIOD, 9);
		assertThat(this.stayOut.remaining(2_000)).isEqualTo(PERIOD);
		this.stayOut.sawTerm(9);
		assertThat(this.stayOut.remaining(2_050)).isEqualTo(50);
	}

}
