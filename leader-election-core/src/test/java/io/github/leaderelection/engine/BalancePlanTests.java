package io.github.leaderelection.engine;

import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import io.github.leaderelection.engine.BalancePlan.Group;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The plan every node draws, without an engine, a store or a clock: shares by weight,
 * moves only while they bring both sides closer to their shares, the groups led longest
 * first, none within its tenure, pinned groups to their candidate.
 */
class BalancePlanTests {

	private static final long NOW = 1_000;

	private static final long TENURE = 100;

	@Test
	void noPlanWhileThisNodeIsNotListedOrEveryCandidateIsStarting() {
		List<Group> groups = List.of(new Group("g1", null, 0));
		assertThat(BalancePlan.of("a", Map.of("b", 1), groups, Map.of())).isNull();
		assertThat(BalancePlan.of("a", Map.of("a", 0, "b", 0), groups, Map.of())).isNull();
	}

	@Test
	void sharesFollowTheWeights() {
		BalancePlan plan = BalancePlan.of("a", Map.of("a", 1, "b", 3), groups("a", 8), Map.of());
		assertThat(plan.shares()).containsEntry("a", 2.0).containsEntry("b", 6.0);
		assertThat(plan.loads()).containsEntry("a", 8).containsEntry("b", 0);
	}

	@Test
	void aSpreadWithinTheSharesMovesNothing() {
		List<Group> groups = List.of(led("g1", 10), led("g2", 20), new Group("g3", "b", 0), new Group("g4", "b", 0));
		BalancePlan plan = BalancePlan.of("a", Map.of("a", 1, "b", 1), groups, Map.of());
		assertThat(plan.ownMoves(NOW, TENURE)).isEmpty();
		assertThat(plan.selfAtShare(0)).isTrue();
		assertThat(plan.othersBelowShare()).isFalse();
	}

	@Test
	void aCandidateThatLeadsNothingIsGivenOneGroupPerRoundTheOneLedLongest() {
		List<Group> groups = List.of(led("g1", 40), led("g2", 10), led("g3", 30), led("g4", 20));
		BalancePlan plan = BalancePlan.of("a", Map.of("a", 1, "b", 1), groups, Map.of());
		assertThat(plan.ownMoves(NOW, TENURE)).containsExactly("g2");
		assertThat(plan.receipts()).containsExactly(Map.entry("b", 1));
		assertThat(plan.othersBelowShare()).isTrue();
	}

	@Test
	void aCandidateThatLeadsSomeIsGivenItsWholeShareLedLongestFirst() {
		List<Group> groups = List.of(led("g1", 40), led("g2", 10), led("g3", 30), led("g4", 20), led("g5", 50),
				new Group("g6", "b", 0));
		BalancePlan plan = BalancePlan.of("a", Map.of("a", 1, "b", 1), groups, Map.of());
		assertThat(plan.ownMoves(NOW, TENURE)).containsExactly("g2", "g4");
	}

	@Test
	void aGroupLedForLessThanItsTenureStays() {
		List<Group> groups = List.of(led("g1", NOW - 10), led("g2", NOW - 20), led("g3", 30), led("g4", NOW - 5));
		BalancePlan plan = BalancePlan.of("a", Map.of("a", 1, "b", 1), groups, Map.of());
		assertThat(plan.ownMoves(NOW, TENURE)).containsExactly("g3");
		List<Group> recent = List.of(led("g1", NOW - 10), led("g2", NOW - 20));
		assertThat(BalancePlan.of("a", Map.of("a", 1, "b", 1), recent, Map.of()).ownMoves(NOW, TENURE)).isEmpty();
	}

	@Test
	void aGroupPinnedToAnotherLiveCandidateGoesToItOnlyAfterItsTenure() {
		List<Group> groups = List.of(led("g1", NOW - 10), led("g2", 20), led("g3", 30));
		Map<String, String> pinned = Map.of("g1", "b");
		BalancePlan plan = BalancePlan.of("a", Map.of("a", 1, "b", 1), groups, pinned);
		// g1 counts as b's (b is at its share), so nothing else moves in its stead.
		assertThat(plan.ownMoves(NOW, TENURE)).isEmpty();
		assertThat(plan.receipts()).doesNotContainKey("b");
		assertThat(plan.ownMoves(NOW + TENURE, TENURE)).containsExactly("g1");
	}

	@Test
	void aGroupPinnedToAnotherLiveCandidateGoesToItAndOnePinnedHereNeverMoves() {
		List<Group> groups = List.of(led("g1", 10), led("g2", 20));
		Map<String, String> pinned = Map.of("g1", "a", "g2", "b");
		BalancePlan plan = BalancePlan.of("a", Map.of("a", 1, "b", 1, "c", 1), groups, pinned);
		assertThat(plan.ownMoves(NOW, TENURE)).containsExactly("g2");
		// b is gone: g2 is as any other group; g1, led longer, stays pinned here.
		BalancePlan pinnedGone = BalancePlan.of("a", Map.of("a", 1, "c", 1), groups, pinned);
		assertThat(pinnedGone.ownMoves(NOW, TENURE)).containsExactly("g2");
	}

	@Test
	void aStartingCandidateHandsNothingOverAndIsGivenNothing() {
		List<Group> groups = List.of(led("g1", 10), led("g2", 20), new Group("g3", "b", 0), new Group("g4", "b", 0));
		BalancePlan plan = BalancePlan.of("a", Map.of("a", 1, "b", 0, "c", 1), groups, Map.of());
		assertThat(plan.shares()).containsEntry("b", 0.0);
		assertThat(plan.ownMoves(NOW, TENURE)).isEmpty();
		assertThat(plan.receipts()).doesNotContainKey("b");
	}

	@Test
	void freeGroupsGoToTheCandidatesFurthestBelowTheirShares() {
		List<Group> groups = List.of(led("g1", 10), new Group("g2", null, 0), new Group("g3", null, 0),
				new Group("g4", "b", 0));
		BalancePlan plan = BalancePlan.of("a", Map.of("a", 1, "b", 1, "c", 2), groups, Map.of());
		assertThat(plan.ownMoves(NOW, TENURE)).isEmpty();
		assertThat(plan.receipts()).containsExactly(Map.entry("c", 2));
		assertThat(plan.selfAtShare(0)).isTrue();
	}

	private static List<Group> groups(String holder, int count) {
		return IntStream.rangeClosed(1, count).mapToObj((i) -> new Group("g" + i, holder, i)).toList();
	}

	private static Group led(String name, long grantedNanos) {
		return new Group(name, "a", grantedNanos);
	}

}
