package io.github.leaderelection.engine;

import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The candidates balancing leaves out, without an engine, a store or a clock: one given
 * groups that takes none three rounds in a row, for twice as long each time; never one
 * that leads, never this node.
 */
class LeftOutCandidatesTests {

	private static final long PERIOD = 10;

	private static final Map<String, Integer> LIVE = Map.of("a", 1, "b", 1);

	private final LeftOutCandidates leftOut = new LeftOutCandidates("a", PERIOD);

	@Test
	void aCandidateGivenGroupsThatTakesNoneThreeRoundsInARowIsLeftOutTwiceAsLongEachTime() {
		long now = round(0, 4, 0);
		assertThat(this.leftOut.noteLoads(Map.of("a", 4, "b", 0), now += PERIOD)).isEmpty();
		assertThat(this.leftOut.noteLoads(Map.of("a", 4, "b", 0), now += PERIOD)).isEmpty();
		assertThat(this.leftOut.noteLoads(Map.of("a", 4, "b", 0), now += PERIOD)).containsExactly(Map.entry("b", 4));
		assertThat(this.leftOut.considered(LIVE, now)).containsOnlyKeys("a");
		assertThat(this.leftOut.considered(LIVE, now + 4 * PERIOD - 1)).containsOnlyKeys("a");
		assertThat(this.leftOut.considered(LIVE, now + 4 * PERIOD)).containsOnlyKeys("a", "b");
		now += 4 * PERIOD;
		this.leftOut.noteLoads(Map.of("a", 4, "b", 0), now += PERIOD);
		this.leftOut.noteLoads(Map.of("a", 4, "b", 0), now += PERIOD);
		assertThat(this.leftOut.noteLoads(Map.of("a", 4, "b", 0), now += PERIOD)).containsExactly(Map.entry("b", 8));
	}

	@Test
	void aCandidateThatTakesAGroupIsTrustedAgainAtOnce() {
		long now = round(0, 4, 0);
		this.leftOut.noteLoads(Map.of("a", 4, "b", 0), now += PERIOD);
		this.leftOut.noteLoads(Map.of("a", 3, "b", 1), now += PERIOD);
		this.leftOut.noteLoads(Map.of("a", 4, "b", 0), now += PERIOD);
		assertThat(this.leftOut.noteLoads(Map.of("a", 4, "b", 0), now += PERIOD)).isEmpty();
		assertThat(this.leftOut.considered(LIVE, now)).containsOnlyKeys("a", "b");
	}

	@Test
	void aCandidateThatLeadsOrWasGivenNothingIsNeverLeftOut() {
		this.leftOut.noteLoads(Map.of("a", 3, "b", 1), 0);
		this.leftOut.expect(Map.of("b", 1));
		for (int i = 1; i <= 5; i++) {
			assertThat(this.leftOut.noteLoads(Map.of("a", 3, "b", 1), i * PERIOD)).isEmpty();
		}
		this.leftOut.expect(Map.of());
		for (int i = 6; i <= 10; i++) {
			assertThat(this.leftOut.noteLoads(Map.of("a", 4, "b", 0), i * PERIOD)).isEmpty();
		}
	}

	/** A first round: the loads seen, and the plan giving b a group. */
	private long round(long now, int selfLoad, int otherLoad) {
		this.leftOut.noteLoads(Map.of("a", selfLoad, "b", otherLoad), now);
		this.leftOut.expect(Map.of("b", 1));
		return now;
	}

}
