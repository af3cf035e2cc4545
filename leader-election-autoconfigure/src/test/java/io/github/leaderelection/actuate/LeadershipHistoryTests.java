package io.github.leaderelection.actuate;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

import io.github.leaderelection.LeaderInfo;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.actuate.LeadershipTransition;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link LeadershipHistory}.
 */
class LeadershipHistoryTests {

	private final LeadershipHistory history = new LeadershipHistory(
			Clock.fixed(Instant.parse("2026-11-24T03:00:00.123456Z"), ZoneOffset.UTC), 3);

	@Test
	void recordsGrantsRevocationsAndLeaderChangesWithTimeTermReasonAndLeader() {
		Leadership leadership = new Leadership("orders", "node-1", 7, (term) -> true);
		this.history.granted(leadership);
		this.history.revoked(leadership, RevocationReason.STORE_ERROR);
		this.history.leaderChanged("orders", new LeaderInfo("orders", "node-2", 8));
		assertThat(this.history.of("orders")).containsExactly(
				new LeadershipTransition("2026-11-24T03:00:00.123Z", "granted", 7L, null, "node-1"),
				new LeadershipTransition("2026-11-24T03:00:00.123Z", "revoked", 7L, "STORE_ERROR", null),
				new LeadershipTransition("2026-11-24T03:00:00.123Z", "leader-changed", 8L, null, "node-2"));
	}

	@Test
	void keepsOnlyTheLastEntriesOfEachGroup() {
		for (long term = 1; term <= 10; term++) {
			this.history.leaderChanged("orders", new LeaderInfo("orders", "node-" + term, term));
		}
		this.history.leaderChanged("billing", null);
		assertThat(this.history.of("orders")).extracting(LeadershipTransition::term).containsExactly(8L, 9L, 10L);
		assertThat(this.history.of("billing")).singleElement()
			.satisfies((transition) -> assertThat(transition.leader()).isNull());
		assertThat(this.history.of("unknown")).isEmpty();
	}

}
