package io.github.leaderelection.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The checker on records written by hand, in milliseconds from the start of the run
 * (renew deadline 1500 ms): what counts as a belief, an overlap, an action outside a
 * belief and a term regression.
 */
class CheckerTests {

	@TempDir
	Path directory;

	private final Map<String, List<String>> nodes = new LinkedHashMap<>();

	private final List<String> harness = new ArrayList<>();

	/** When the harness stopped injecting faults. */
	private long endMillis = 10_000;

	/** The group that the records written next are about. */
	private String group = ChaosSettings.GROUP;

	/** How many groups the run has, and whether it balances them. */
	private int groups = 1;

	private boolean balance;

	@Test
	void leaderPausedPastItsLeaseEndsAtItsDeadlineNotAtItsLateRevocation() throws IOException {
		node("a", "library");
		acquire("a", 0, 10, 1);
		renew("a", 400, 410, 1, "true");
		renewStarted("a", 800, 1); // paused during this renewal, until 4000
		record("a", "revoked", ms(4010), 1, "LEASE_LOST");
		node("b", "library");
		acquire("b", 2900, 2910, 2);
		this.endMillis = 4400; // b's belief ends there: no leaderless time after it
		ChaosSummary summary = check();
		assertThat(summary.overlaps()).isZero();
		assertThat(summary.passed()).isTrue();
		// What a node trusting its events would have believed overlaps from 2910 to 4010.
		record("a", "granted", ms(20), 1);
		record("b", "granted", ms(2920), 2);
		summary = check();
		assertThat(summary.eventOverlaps()).isOne();
		assertThat(summary.eventOverlapMillis()).isEqualTo(1090.0);
		assertThat(summary.passed()).isTrue();
	}

	@Test
	void grantBeforeTheOldDeadlineIsAnOverlap() throws IOException {
		node("a", "library");
		acquire("a", 0, 10, 1);
		renew("a", 400, 410, 1, "true");
		node("b", "library");
		acquire("b", 1700, 1710, 2);
		ChaosSummary summary = check();
		assertThat(summary.overlaps()).isOne();
		assertThat(summary.overlapMillis()).isEqualTo(190.0);
		assertThat(summary.passed()).isFalse();
	}

	@Test
	void renewalWithUnknownOutcomeCountsAsSuccessfulButFailedOneDoesNot() throws IOException {
		node("a", "library");
		acquire("a", 0, 10, 1);
		renew("a", 400, 1500, 1, "false");
		renewStarted("a", 900, 1); // killed during it
		death("a", 1000);
		node("b", "library");
		acquire("b", 1200, 1210, 2);
		assertThat(check().overlaps()).isZero(); // death bounds it
		this.harness.clear();
		assertThat(check().overlaps()).isOne(); // without the death, 900 + 1500 > 1210
	}

	@Test
	void releaseEndsTheBeliefEvenIfTheRevokedEventIsLate() throws IOException {
		node("a", "library");
		acquire("a", 0, 10, 1);
		renew("a", 400, 410, 1, "true");
		record("a", "release", ms(500), 1);
		record("a", "revoked", ms(2500), 1, "SHUTDOWN");
		node("b", "library");
		acquire("b", 600, 610, 2);
		assertThat(check().overlaps()).isZero();
	}

	@Test
	void lateTakeOverWaitsForActiveIn() throws IOException {
		node("a", "library");
		acquire("a", 0, 10, 1);
		node("b", "library");
		record("b", "acquire", ms(200), ms(210), "taken", 2, ms(1400));
		ChaosSummary summary = check();
		assertThat(summary.overlaps()).isZero();
		assertThat(summary.beliefIntervals()).isEqualTo(2);
	}

	@Test
	void actionAllowedOutsideTheBeliefIsCounted() throws IOException {
		node("a", "library");
		acquire("a", 0, 10, 1);
		action("a", 100, 1, "accepted");
		action("a", 1600, 1, "refused"); // after the deadline at 1500
		ChaosSummary summary = check();
		assertThat(summary.actionsOutsideBelief()).isOne();
		assertThat(summary.staleWritesRefused()).isOne();
		assertThat(summary.passed()).isFalse();
	}

	@Test
	void probeSampleOutsideTheBoundsMakesTheBoundsUnsound() throws IOException {
		node("a", "library");
		acquire("a", 0, 10, 1);
		record("a", "probe", ms(9), ms(9), ms(11), ms(11), 0, 1);
		record("a", "probe", ms(1600), ms(1600), ms(1601), ms(1601), 1, 0);
		ChaosSummary summary = check();
		assertThat(summary.unexplainedBeliefs()).isOne();
		assertThat(summary.passed()).isFalse();
	}

	@Test
	void termSeenAgainAfterItEndedIsARevival() throws IOException {
		node("a", "library");
		acquire("a", 0, 10, 1);
		renew("a", 1400, 1450, 1, "true");
		record("a", "probe", ms(10), ms(10), ms(11), ms(11), 0, 1);
		record("a", "probe", ms(1400), ms(1400), ms(1401), ms(1401), 1, 0);
		record("a", "probe", ms(1450), ms(1450), ms(1451), ms(1451), 0, 1);
		this.endMillis = 2900;
		ChaosSummary summary = check();
		assertThat(summary.beliefRevivals()).isOne();
		assertThat(summary.passed()).isFalse();
	}

	@Test
	void termThatDoesNotGrowIsARegression() throws IOException {
		node("a", "library");
		acquire("a", 0, 10, 5);
		death("a", 100);
		node("b", "library");
		acquire("b", 3000, 3010, 5);
		ChaosSummary summary = check();
		assertThat(summary.termRegressions()).isEqualTo(2); // the belief order and the
															// acquire order
		assertThat(summary.termReuses()).isOne(); // b was granted a's term
		assertThat(summary.passed()).isFalse();
	}

	@Test
	void termGrantedTwiceIsAReuseEvenWhenOnlyOneGrantBecameABelief() throws IOException {
		// a is granted term 4 on a record it finds lost, waits a lease before acting and
		// loses the group before then: no belief. b's grant of term 4 overlapped a's
		// call, so neither the beliefs nor the acquires go backwards.
		node("a", "library");
		record("a", "acquire", ms(0), ms(300), "taken", 4, ms(2000));
		record("a", "revoked", ms(400), 4, "LEASE_LOST");
		node("b", "library");
		acquire("b", 100, 110, 4);
		this.endMillis = 1600;
		ChaosSummary summary = check();
		assertThat(summary.beliefIntervals()).isOne();
		assertThat(summary.termRegressions()).isZero();
		assertThat(summary.termReuses()).isOne();
		assertThat(summary.violations()).contains("1 term reuses");
	}

	@Test
	void writesOfTwoProcessesInOneTermAreAReuse() throws IOException {
		node("a", "library");
		acquire("a", 0, 10, 5);
		this.harness.add("write 1 a 5 chaos");
		this.harness.add("write 2 a 5 chaos");
		this.endMillis = 1500;
		assertThat(check().termReuses()).isZero();
		// The fence accepts a write of the highest term so far, whoever sends it.
		this.harness.add("write 3 b 5 chaos");
		ChaosSummary summary = check();
		assertThat(summary.staleWritesAccepted()).isZero();
		assertThat(summary.termReuses()).isOne();
		assertThat(summary.passed()).isFalse();
	}

	@Test
	void flagBeliefLastsFromGrantedToRevokedEvent() throws IOException {
		node("a", "flag");
		acquire("a", 0, 10, 1);
		record("a", "granted", ms(20), 1);
		record("a", "revoked", ms(4000), 1, "LEASE_LOST");
		node("b", "flag");
		acquire("b", 2900, 2910, 2);
		record("b", "granted", ms(2920), 2);
		ChaosSummary summary = check();
		assertThat(summary.overlaps()).isOne();
		assertThat(summary.overlapMillis()).isEqualTo(1080.0);
	}

	@Test
	void staleWriteAcceptedIsCountedFromTheTable() throws IOException {
		node("a", "library");
		acquire("a", 0, 10, 1);
		this.harness.add("write 1 a 2 chaos");
		this.harness.add("write 2 a 1 chaos");
		this.harness.add("write 3 a 2 chaos");
		ChaosSummary summary = check();
		assertThat(summary.staleWritesAccepted()).isOne();
		assertThat(summary.passed()).isFalse();
	}

	@Test
	void writesOfAJobIgnoringRevocationAreHeldToTheFenceNotToTheBelief() throws IOException {
		node("a", "library");
		acquire("a", 0, 10, 1);
		node("b", "library");
		acquire("b", 2000, 2010, 2);
		this.harness.add("write 1 b 2 chaos");
		// a's job goes on in term 1 after its belief ended at 1500: the fence refuses it.
		record("a", "rogue", ms(2100), ms(2105), 1, "refused");
		this.endMillis = 3000;
		ChaosSummary summary = check();
		assertThat(summary.rogueWrites()).isOne();
		assertThat(summary.rogueWritesRefused()).isOne();
		assertThat(summary.actionsOutsideBelief()).isZero();
		assertThat(summary.violations()).isEmpty();
		// Had the fence let it through, the table shows a stale write, and the run fails.
		this.harness.add("write 2 a 1 chaos");
		assertThat(check().passed()).isFalse();
	}

	@Test
	void aLeaderWhoseClockRunsSlowBelievesForItsRenewDeadlineOnItsOwnClock() throws IOException {
		// From 100, a's clock runs at half the rate: the renew deadline of 1500 on its
		// clock, counted from the renewal at 400, ends at 3400, and b's grant at 2510
		// overlaps it.
		node("a", "library");
		acquire("a", 0, 10, 1);
		record("a", "rate", ms(100), 0.5);
		renew("a", 400, 410, 1, "true");
		node("b", "library");
		acquire("b", 2500, 2510, 2);
		this.endMillis = 4000;
		ChaosSummary summary = check();
		assertThat(summary.overlaps()).isOne();
		assertThat(summary.overlapMillis()).isEqualTo(890.0);
		assertThat(summary.passed()).isFalse();
	}

	@Test
	void aClockSlowedForAWhileMovesTheDeadlineByWhatItLost() throws IOException {
		// Half rate from 100 to 1000: of the deadline of 1500 counted from 400, 300 pass
		// by 1000 and the other 1200 by 2200. The probe saw term 1 until 2100.
		node("a", "library");
		acquire("a", 0, 10, 1);
		record("a", "rate", ms(100), 0.5);
		renew("a", 400, 410, 1, "true");
		record("a", "rate", ms(1000), 1.0);
		record("a", "probe", ms(0), ms(0), ms(20), ms(20), 0, 1);
		record("a", "probe", ms(2100), ms(2100), ms(2201), ms(2201), 1, 0);
		node("b", "library");
		acquire("b", 2500, 2510, 2);
		this.endMillis = 4000;
		ChaosSummary summary = check();
		assertThat(summary.unexplainedBeliefs()).isZero();
		assertThat(summary.overlaps()).isZero();
		assertThat(summary.violations()).isEmpty();
	}

	@Test
	void aWaitBeforeActingRunsOnTheNodesOwnClock() throws IOException {
		// From 100, a's clock runs a quarter fast: the wait of 1000 on its clock after
		// the acquire that returned at 210 ends at 1010 in real time, and a acts then
		// (its granted event at 1020, a probe that saw the term from 1030).
		node("a", "library");
		record("a", "rate", ms(100), 1.25);
		record("a", "acquire", ms(200), ms(210), "taken", 1, ms(1000));
		record("a", "granted", ms(1020), 1);
		record("a", "probe", ms(1030), ms(1030), ms(1040), ms(1040), 0, 1);
		renew("a", 1100, 1110, 1, "true");
		this.endMillis = 2000;
		ChaosSummary summary = check();
		assertThat(summary.unexplainedBeliefs()).isZero();
		assertThat(summary.violations()).isEmpty();
	}

	@Test
	void leaderlessTimeAfterACrashIsBoundedByTheLeaseFromTheCrash() throws IOException {
		// Bound: lease 2000 + 1.2 x retry 480 + the acquire's round trip 10 after the
		// kill at 3000.
		node("a", "library");
		acquire("a", 0, 10, 1);
		renew("a", 2900, 2910, 1, "true");
		death("a", 3000);
		fault("kill-leader", 3000, 3001);
		node("b", "library");
		acquire("b", 5480, 5490, 2);
		renew("b", 5880, 5890, 2, "true");
		this.endMillis = 7000;
		ChaosSummary summary = check();
		assertThat(summary.leaderless()).singleElement().satisfies((gap) -> {
			assertThat(gap.cause()).isEqualTo("kill-leader");
			assertThat(gap.nanos()).isEqualTo(ms(2490));
			assertThat(gap.withinBound()).isTrue();
		});
		assertThat(summary.passed()).isTrue();
		this.nodes.get("b").clear();
		node("b", "library");
		acquire("b", 5500, 5510, 2);
		renew("b", 5880, 5890, 2, "true");
		summary = check();
		assertThat(summary.lateGaps()).hasSize(1);
		assertThat(summary.passed()).isFalse();
		assertThat(summary.violations()).anyMatch((violation) -> violation.contains("past their bound"));
	}

	@Test
	void leaderlessTimeAfterAGracefulStopIsBoundedByARetryPeriod() throws IOException {
		leaderStopsGracefullyAndBTakesOverAt(3400);
		assertThat(check().passed()).isTrue();
		this.nodes.get("b").clear();
		node("b", "library");
		acquire("b", 3500, 3510, 2);
		assertThat(check().lateGaps()).singleElement()
			.satisfies((gap) -> assertThat(gap.cause()).isEqualTo("restart-leader"));
	}

	@Test
	void aGapThatBeginsAfterAFaultsBoundIsNotChargedToTheFault() throws IOException {
		// a is stopped from 100 to 3300 (crash bound: 100 + 2480 = 2580); b leads x
		// throughout, and releases it at 3000 (a hand-over whose revocation it never
		// recorded: it was killed right after); c takes it 5 ms later. That gap is not
		// the stop's, whose bound was kept: it is judged as a gap after no fault.
		fault("stop-leader", 100, 3300);
		node("b", "library");
		acquire("b", 0, 10, 1);
		for (long renewal = 400; renewal < 3000; renewal += 400) {
			renew("b", renewal, renewal + 2, 1, "true");
		}
		record("b", "release", ms(3000), 1);
		record("b", "release-end", ms(3001), 1);
		node("c", "library");
		acquire("c", 3004, 3005, 2);
		this.endMillis = 4000;
		assertThat(check().leaderless()).singleElement().satisfies((gap) -> {
			assertThat(gap.cause()).isEqualTo("none");
			assertThat(gap.withinBound()).isTrue();
		});
	}

	@Test
	void timeTheTakingProcessWasStalledIsAddedToItsBoundUnlessAFaultStalledIt() throws IOException {
		leaderStopsGracefullyAndBTakesOverAt(3500);
		assertThat(check().lateGaps()).hasSize(1);
		// b's probe saw 150 ms pass during the gap, 100 of them after it began.
		record("b", "stall", ms(2910), ms(3110));
		assertThat(check().leaderless()).singleElement().satisfies((gap) -> {
			assertThat(gap.stall()).isEqualTo(ms(100));
			assertThat(gap.withinBound()).isTrue();
		});
		// A stall that a fault aimed at b began (long over, so not charged with the
		// gap) is the fault's.
		this.nodes.get("b").remove(this.nodes.get("b").size() - 1);
		record("b", "stall", ms(100), ms(3110));
		this.harness.add("fault pause-leader " + ms(50) + " " + ms(150) + " b -");
		assertThat(check().lateGaps()).singleElement().satisfies((gap) -> assertThat(gap.stall()).isZero());
	}

	@Test
	void aLateGapIsTracedWithWhatEveryProcessRecordedAroundIt() throws IOException {
		leaderStopsGracefullyAndBTakesOverAt(3500);
		record("a", "probe", ms(2950), ms(2950), ms(2951), ms(2951), 1, 1);
		String trace = GapTrace.of(this.directory, check().lateGaps());
		assertThat(trace).contains("Records around the gap at 3.010 s (500 ms, restart-leader")
			.containsSubsequence("renew-start " + ms(2900), "fault restart-leader " + ms(3000), "revoked " + ms(3010),
					"acquire " + ms(3500))
			.doesNotContain("probe")
			.doesNotContain("acquire 0 ");
	}

	@Test
	void leaderlessTimeAfterTheStoreWentDownCountsFromItsReturn() throws IOException {
		node("a", "library");
		acquire("a", 0, 10, 1);
		renew("a", 900, 910, 1, "true");
		fault("restart-store", 1000, 3000);
		node("b", "library");
		// Store back at 3000: bound 2000 + 2 x 400 + 10 from there.
		acquire("b", 5800, 5810, 2);
		this.endMillis = 6500;
		assertThat(check().passed()).isTrue();
	}

	@Test
	void aLeaderCutOffAfterItsRecordWasLostBoundsTheGapByItsFaultPlusTheLostWait() throws IOException {
		// a's term lowered at 1000, a cut off at 1250 with its lease live: nobody takes
		// the group before the cut's bound (1250 + 2800 + 20), and the take finds the
		// record lost and waits one lease more (2000).
		node("a", "library");
		acquire("a", 0, 10, 1);
		renew("a", 900, 910, 1, "true");
		fault("lose-store-data", 1000, 1010);
		fault("cut-leader", 1250, 3300);
		node("b", "library");
		acquire("b", 6000, 6010, 2);
		this.endMillis = 7000;
		assertThat(check().leaderless()).singleElement().satisfies((gap) -> {
			assertThat(gap.cause()).isEqualTo("cut-leader");
			assertThat(gap.withinBound()).isTrue();
		});
		this.nodes.get("b").clear();
		node("b", "library");
		acquire("b", 6200, 6210, 2);
		assertThat(check().lateGaps()).hasSize(1);
	}

	@Test
	void aLeaderStoppedAfterItsRecordWasLostBoundsTheGapByItsFaultPlusTheLostWaitEvenIfTheLossEndsLater()
			throws IOException {
		// a's term lowered at 1000 (the loss's own bound: 1000 + 2800 + 20), a stopped at
		// 1300 with its lease live: nobody takes the group before the stop's bound (1300
		// + 2480 + 20), earlier than the loss's, and the take then finds the record lost
		// and waits one lease more (2000), until 5800.
		node("a", "library");
		acquire("a", 0, 10, 1);
		renew("a", 900, 910, 1, "true");
		fault("lose-store-data", 1000, 1010);
		fault("stop-leader", 1300, 4000);
		node("b", "library");
		acquire("b", 5700, 5710, 2);
		this.endMillis = 7000;
		assertThat(check().leaderless()).singleElement().satisfies((gap) -> {
			assertThat(gap.cause()).isEqualTo("stop-leader");
			assertThat(gap.withinBound()).isTrue();
		});
		this.nodes.get("b").clear();
		node("b", "library");
		acquire("b", 5900, 5910, 2);
		assertThat(check().lateGaps()).hasSize(1);
	}

	@Test
	void aRestoreOfACopyWhoseLeaseStillRanBoundsTheGapByThatLeasePlusTheLostWait() throws IOException {
		// An older copy written back at 1000, its lease still running: the next holder
		// waits for it (up to a lease, 2000) and then, the record being older than a
		// term it saw, one lease more: 1000 + 2000 + 2800 + 20. A loss that writes no
		// lease back is bounded without the first lease.
		node("a", "library");
		acquire("a", 0, 10, 1);
		renew("a", 900, 910, 1, "true");
		fault("lose-store-data", 1000, 1010, "restore:3-rows-copied-400ms-before");
		node("b", "library");
		acquire("b", 5700, 5710, 2);
		this.endMillis = 7000;
		assertThat(check().leaderless()).singleElement().satisfies((gap) -> {
			assertThat(gap.cause()).isEqualTo("lose-store-data");
			assertThat(gap.withinBound()).isTrue();
		});
		this.nodes.get("b").clear();
		node("b", "library");
		acquire("b", 5900, 5910, 2);
		assertThat(check().lateGaps()).hasSize(1);
		this.harness.clear();
		fault("lose-store-data", 1000, 1010, "delete-record:chaos");
		this.nodes.get("b").clear();
		node("b", "library");
		acquire("b", 5700, 5710, 2);
		assertThat(check().lateGaps()).hasSize(1);
	}

	@Test
	void aBoundCountsFromWhenAnotherCandidateRuns() throws IOException {
		node("a", "library");
		acquire("a", 0, 10, 1);
		death("a", 1000);
		fault("kill-leader", 1000, 1001);
		node("b", "library");
		this.nodes.get("b").set(1, "ready " + ms(3000)); // b's JVM was still starting
		acquire("b", 5400, 5410, 2); // 3000 + 2480 + 10
		this.endMillis = 6000;
		assertThat(check().lateGaps()).isEmpty();
		this.nodes.get("b").set(1, "ready " + ms(0));
		assertThat(check().lateGaps()).hasSize(1);
	}

	@Test
	void leaderlessTimeWithoutAFaultIsBoundedToo() throws IOException {
		node("a", "library");
		acquire("a", 0, 10, 1);
		node("b", "library");
		acquire("b", 4400, 4410, 2); // 2900 ms after a's belief ended at 1500
		this.endMillis = 5000;
		ChaosSummary summary = check();
		assertThat(summary.lateGaps()).singleElement().satisfies((gap) -> assertThat(gap.cause()).isEqualTo("none"));
	}

	@Test
	void aGroupStillLeaderlessWhenTheRunEndsIsCounted() throws IOException {
		node("a", "library");
		acquire("a", 0, 10, 1);
		death("a", 1000);
		fault("kill-leader", 1000, 1001);
		node("b", "library"); // runs, but never takes over
		this.endMillis = 9000;
		ChaosSummary summary = check();
		assertThat(summary.lateGaps()).singleElement().satisfies((gap) -> assertThat(gap.end()).isEqualTo(ms(9000)));
	}

	@Test
	void aWriteHeldUpByAnotherWritersLockIsCountedUnlessAFaultTargetsTheWriter() throws IOException {
		node("a", "library");
		acquire("a", 0, 10, 1);
		renew("a", 400, 410, 1, "true");
		write("a", 500, 1, 510, 3000, "accepted"); // waited 2.5 s for the fence row
		this.endMillis = 1500;
		ChaosSummary summary = check();
		assertThat(summary.writesHeldUp()).isOne();
		assertThat(summary.longestWriteMillis()).isEqualTo(2490.0);
		assertThat(summary.passed()).isFalse();
		fault("hang-leader", 400, 3500); // a's own link hung: it waited for itself
		assertThat(check().writesHeldUp()).isZero();
	}

	@Test
	void eachGroupIsJudgedOnItsOwnTermsAndBeliefs() throws IOException {
		manyGroups(false);
		node("a", "library");
		node("b", "library");
		in("x");
		acquire("a", 0, 10, 1);
		renew("a", 400, 410, 1, "true");
		in("y");
		// The same term in another group, while a leads x: neither an overlap nor a
		// regression.
		acquire("b", 100, 110, 1);
		renew("b", 500, 510, 1, "true");
		this.endMillis = 1800;
		ChaosSummary summary = check();
		assertThat(summary.beliefIntervals()).isEqualTo(2);
		assertThat(summary.overlaps()).isZero();
		assertThat(summary.termRegressions()).isZero();
		assertThat(summary.violations()).isEmpty();
		// b granted x while a still believes in it: an overlap in x.
		in("x");
		acquire("b", 1700, 1710, 2);
		summary = check();
		assertThat(summary.overlaps()).isOne();
		assertThat(summary.overlapMillis()).isEqualTo(190.0);
	}

	@Test
	void termsGoBackwardsInAGroupWhateverTheOtherGroupsTermsAre() throws IOException {
		manyGroups(false);
		node("a", "library");
		node("b", "library");
		in("x");
		acquire("a", 0, 10, 7);
		death("a", 100);
		in("y");
		acquire("b", 200, 210, 3);
		death("b", 300);
		node("c", "library");
		acquire("c", 3000, 3010, 3); // y's term 3 again
		this.endMillis = 3500;
		assertThat(check().termRegressions()).isEqualTo(2);
	}

	@Test
	void anActionIsHeldToTheBeliefOfItsOwnGroup() throws IOException {
		manyGroups(false);
		node("a", "library");
		in("x");
		acquire("a", 0, 10, 1);
		action("a", 100, 1, "accepted");
		in("y");
		action("a", 200, 1, "accepted"); // a never led y
		this.endMillis = 1500;
		assertThat(check().actionsOutsideBelief()).isOne();
	}

	@Test
	void eachGroupHasItsOwnFence() throws IOException {
		manyGroups(false);
		node("a", "library");
		in("x");
		acquire("a", 0, 10, 5);
		this.harness.add("write 1 a 5 x");
		this.harness.add("write 2 b 1 y");
		this.harness.add("write 3 b 2 y");
		this.endMillis = 1500;
		assertThat(check().staleWritesAccepted()).isZero();
		this.harness.add("write 4 b 1 y");
		assertThat(check().staleWritesAccepted()).isOne();
	}

	@Test
	void aGroupWithoutALeaderIsALeaderlessIntervalWhileTheOthersAreLed() throws IOException {
		manyGroups(false);
		node("a", "library");
		node("b", "library");
		in("x");
		acquire("a", 0, 10, 1);
		renew("a", 1000, 1010, 1, "true");
		renew("a", 2000, 2010, 1, "true");
		renew("a", 3000, 3010, 1, "true");
		in("y");
		acquire("b", 0, 10, 1);
		death("b", 500);
		this.endMillis = 4000;
		assertThat(check().lateGaps()).singleElement().satisfies((gap) -> {
			assertThat(gap.group()).isEqualTo("y");
			assertThat(gap.start()).isEqualTo(ms(500));
		});
	}

	@Test
	void aHandOverLeavesItsGroupWithoutALeaderForTwoRetryPeriodsFromItsRelease() throws IOException {
		// a hands x over at 3000 and its release returns at 3010. Bound: a retry period
		// for the others to read x, one more that they may hold back, and the round trip
		// of the acquire that ends the gap: 3010 + 400 + 400 + 2 x 10 = 3830.
		handOver(true);
		acquire("b", 3800, 3810, 2);
		ChaosSummary summary = check();
		assertThat(summary.handOvers()).isOne();
		assertThat(summary.leaderless()).singleElement().satisfies((gap) -> {
			assertThat(gap.cause()).isEqualTo("hand-over");
			assertThat(gap.deadline() - gap.start()).isEqualTo(ms(830));
			assertThat(gap.withinBound()).isTrue();
			assertThat(gap.begunByHandOver()).isTrue();
			assertThat(gap.handOverDeadline()).isEqualTo(gap.deadline());
		});
		assertThat(summary.violations()).isEmpty();
		this.nodes.get("b").clear();
		node("b", "library");
		acquire("b", 3850, 3860, 2);
		assertThat(check().lateGaps()).singleElement()
			.satisfies((gap) -> assertThat(gap.cause()).isEqualTo("hand-over"));
	}

	@Test
	void aFaultUnderWayMayAllowAGapThatAHandOverBeganLongerThanTheHandOversBound() throws IOException {
		handOver(true);
		fault("cut-follower", 2500, 4500); // bound 2800 + 400 + 20 from 2500: 5720
		acquire("b", 5000, 5010, 2);
		this.endMillis = 6000;
		assertThat(check().leaderless()).singleElement().satisfies((gap) -> {
			assertThat(gap.cause()).isEqualTo("cut-follower");
			assertThat(gap.withinBound()).isTrue();
			assertThat(gap.begunByHandOver()).isTrue();
			assertThat(gap.withinHandOverBound()).isFalse();
		});
	}

	@Test
	void aHandOverWhoseReleaseDidNotReturnWaitsForTheLeaseToRunOut() throws IOException {
		handOver(false);
		acquire("b", 6000, 6010, 2); // 3000 + 2000 + 2 x 400 + 400 + 20 = 6220
		this.endMillis = 6500;
		assertThat(check().leaderless()).singleElement().satisfies((gap) -> {
			assertThat(gap.cause()).isEqualTo("hand-over");
			assertThat(gap.withinBound()).isTrue();
		});
	}

	@Test
	void aHandOverInAnotherGroupIsNotChargedWithAGap() throws IOException {
		handOver(true);
		in("y");
		acquire("a", 0, 10, 1);
		death("a", 3000); // y's leaderless interval is a's, not the hand-over's
		acquire("b", 3800, 3810, 2);
		assertThat(check().leaderless()).filteredOn((gap) -> gap.group().equals("y"))
			.singleElement()
			.satisfies((gap) -> {
				assertThat(gap.cause()).isEqualTo("none");
				assertThat(gap.begunByHandOver()).isFalse();
			});
	}

	@Test
	void theSummaryListsEveryLateIntervalAndTheOthersClosestToTheirBoundUpToItsLimit() {
		// Bounds of 1000 ms; interval i lasts (389 i mod 1000) + 1 ms, each length once
		// in an order unrelated to when the intervals began, and every 100th interval
		// (g100, g200, ...) lasts 1500 ms, past its bound.
		List<Liveness.Gap> gaps = new ArrayList<>();
		for (int i = 1; i <= 1000; i++) {
			long length = (i % 100 == 0) ? 1500 : (389L * i) % 1000 + 1;
			gaps.add(new Liveness.Gap("g" + i, ms(i * 10L), ms(i * 10L + length), "kill-leader", ms(i * 10L + 1000), 0,
					0));
		}
		assertThat(ChaosSummary.listed(gaps, 2000)).isEqualTo(gaps);
		// The 10 late ones and the 5 longest of the others (1000, 999, 998, 997 and 996
		// ms: g491, g982, g473, g964 and g455), in the order they began.
		assertThat(ChaosSummary.listed(gaps, 15)).extracting(Liveness.Gap::group)
			.containsExactly("g100", "g200", "g300", "g400", "g455", "g473", "g491", "g500", "g600", "g700", "g800",
					"g900", "g964", "g982", "g1000");
		// Late ones are listed even beyond the limit.
		assertThat(ChaosSummary.listed(gaps, 2)).extracting(Liveness.Gap::group)
			.containsExactly("g100", "g200", "g300", "g400", "g500", "g600", "g700", "g800", "g900", "g1000");
	}

	@Test
	void withBalancingEveryBoundAllowsARetryPeriodOfHoldingBack() throws IOException {
		// Crash bound 2480 + 10, and 400 of balancing hold-back, after the kill at 3000.
		manyGroups(true);
		node("a", "library");
		acquire("a", 0, 10, 1);
		renew("a", 2900, 2910, 1, "true");
		death("a", 3000);
		fault("kill-leader", 3000, 3001);
		node("b", "library");
		acquire("b", 5880, 5890, 2);
		this.endMillis = 7000;
		assertThat(check().lateGaps()).isEmpty();
		this.nodes.get("b").clear();
		node("b", "library");
		acquire("b", 5900, 5910, 2);
		assertThat(check().lateGaps()).hasSize(1);
	}

	@Test
	void aRecordThatDoesNotNameItsGroupIsRefused() throws IOException {
		node("a", "library");
		this.nodes.get("a").add("acquire " + ms(0) + " " + ms(10) + " taken 1 0");
		assertThatIllegalArgumentException().isThrownBy(this::check).withMessageContaining("the group last");
	}

	// Records

	/**
	 * a leads group x from 0 and hands it over at 3000: its release starts then and
	 * returns at 3010 (if {@code released}), its revocation is recorded at 3005; b, which
	 * runs, takes x next (the caller records it); the run ends at 4000.
	 */
	private void handOver(boolean released) {
		manyGroups(true);
		in("x");
		node("a", "library");
		acquire("a", 0, 10, 1);
		renew("a", 2900, 2910, 1, "true");
		record("a", "release", ms(3000), 1);
		record("a", "revoked", ms(3005), 1, "REBALANCED");
		if (released) {
			record("a", "release-end", ms(3010), 1);
		}
		node("b", "library");
		this.endMillis = 4000;
	}

	/** The run has more than one group, and balances them or not. */
	private void manyGroups(boolean balanced) {
		this.groups = 2;
		this.balance = balanced;
	}

	/** The records written next are about this group. */
	private void in(String group) {
		this.group = group;
	}

	private void write(String key, long check, long term, long start, long end, String outcome) {
		record(key, "action", ms(check), ms(check), term, ms(start), ms(end), outcome);
	}

	/**
	 * a leads from 0 and stops gracefully at 3000 (revoked at 3010); b, started at 0,
	 * acquires at the given time; the run ends at 4000.
	 */
	private void leaderStopsGracefullyAndBTakesOverAt(long acquireMillis) {
		node("a", "library");
		acquire("a", 0, 10, 1);
		renew("a", 2900, 2910, 1, "true");
		fault("restart-leader", 3000, 3100);
		record("a", "revoked", ms(3010), 1, "SHUTDOWN");
		node("b", "library");
		acquire("b", acquireMillis, acquireMillis + 10, 2);
		this.endMillis = 4000;
	}

	private void fault(String type, long start, long end) {
		fault(type, start, end, "-");
	}

	private void fault(String type, long start, long end, String detail) {
		this.harness.add("fault " + type + " " + ms(start) + " " + ms(end) + " a " + detail);
	}

	private void node(String key, String belief) {
		this.nodes.computeIfAbsent(key, (k) -> new ArrayList<>())
			.add("node 0 " + key + " 1 " + key + "-1 " + belief + " on " + ms(1500));
		record(key, "ready", 0);
	}

	private void acquire(String key, long entry, long exit, long term) {
		record(key, "acquire", ms(entry), ms(exit), "taken", term, 0);
	}

	private void renew(String key, long entry, long exit, long term, String outcome) {
		renewStarted(key, entry, term);
		record(key, "renew-end", ms(entry), ms(exit), term, outcome);
	}

	private void renewStarted(String key, long entry, long term) {
		record(key, "renew-start", ms(entry), term);
	}

	private void action(String key, long check, long term, String outcome) {
		record(key, "action", ms(check), ms(check) + 1000, term, ms(check + 1), ms(check + 2), outcome);
	}

	private void death(String key, long at) {
		this.harness.add("death " + ms(at) + " " + ms(at) + " " + key + " kill");
	}

	/**
	 * Records a line of a node; one about a group's election ends with the group, which
	 * is the run's one group ({@value ChaosSettings#GROUP}) unless a test chose another.
	 */
	private void record(String key, Object... fields) {
		StringBuilder line = new StringBuilder();
		for (Object field : fields) {
			line.append((line.length() > 0) ? " " : "").append(field);
		}
		if (EventLog.isAboutAGroup(fields[0].toString())) {
			line.append(' ').append(this.group);
		}
		this.nodes.get(key).add(line.toString());
	}

	private static long ms(long millis) {
		return millis * 1_000_000;
	}

	private ChaosSummary check() throws IOException {
		for (Map.Entry<String, List<String>> node : this.nodes.entrySet()) {
			Files.write(this.directory.resolve("node-" + node.getKey() + ".log"), node.getValue());
		}
		List<String> lines = new ArrayList<>();
		lines.add("run 0 0 test jdbc-mariadb 1 library on " + ms(2000) + " " + ms(1500) + " " + ms(400) + " "
				+ this.groups + " " + (this.balance ? "balanced" : "unbalanced"));
		lines.addAll(this.harness);
		lines.add("end " + ms(this.endMillis));
		Files.write(this.directory.resolve("harness.log"), lines);
		// Every node on the same timing, which the bounds here are worked out from.
		ChaosSettings settings = ChaosSettings.safe(Backend.JDBC_MARIADB, 1, null, 1, this.directory.resolve("out"))
			.withTimings(Collections.nCopies(3, ChaosSettings.TIMING));
		if (this.groups != 1 || this.balance) {
			settings = settings.withGroups(this.groups, this.balance);
		}
		return Checker.check(this.directory, settings);
	}

}
