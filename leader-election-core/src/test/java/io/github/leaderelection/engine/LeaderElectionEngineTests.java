package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.engine.TestEngines.Candidate;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.testing.OverlapMonitor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.github.leaderelection.engine.TestEngines.GROUP;
import static io.github.leaderelection.engine.TestEngines.TIMING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Behaviour of the election engine against an in-memory store with injected faults, on
 * virtual time: the engines and the store share a {@link VirtualElectionScheduler}, time
 * moves in steps of {@link #STEP}, and after every step at most one candidate leads the
 * group. Listeners are called on real threads: tests wait for their events. Stores that
 * hang, and the engine's own threads, are tested in real time ({@link HungStoreTests}).
 */
class LeaderElectionEngineTests {

	private static final Duration STEP = Duration.ofMillis(10);

	/** The most virtual time a wait may take: generous, and costs milliseconds. */
	private static final Duration WAIT = Duration.ofSeconds(60);

	private final VirtualElectionScheduler time = new VirtualElectionScheduler();

	private final InMemoryLeaseStore store = new InMemoryLeaseStore(this.time::nanoTime);

	private final TestEngines engines = new TestEngines(this.time);

	private final List<Candidate> candidates = new ArrayList<>();

	@AfterEach
	void closeEngines() {
		this.engines.close();
	}

	@Test
	void singleCandidateBecomesLeaderAndIsToldSo() {
		Candidate a = candidate("a", this.store);
		advanceUntil(a.election()::isLeader);
		await().atMost(Duration.ofSeconds(15)).until(() -> a.events().grantedTerms.size() == 1);
		Leadership leadership = a.election().leadership().orElseThrow();
		assertThat(leadership.term()).isEqualTo(a.events().grantedTerms.get(0)).isPositive();
		assertThat(leadership.isValid()).isTrue();
		assertThat(a.election().currentLeader()).hasValueSatisfying((leader) -> {
			assertThat(leader.candidateId()).isEqualTo("a");
			assertThat(leader.term()).isEqualTo(leadership.term());
		});
	}

	@Test
	void twoCandidatesElectOneAndTheFollowerSeesIt() throws Exception {
		Candidate a = candidate("a", this.store);
		advanceUntil(a.election()::isLeader);
		Candidate b = candidate("b", this.store);
		try (OverlapMonitor monitor = new OverlapMonitor(List.of(a.election(), b.election()),
				LeaderElection::isLeader)) {
			advanceUntil(() -> b.election().currentLeader().isPresent());
			advance(TIMING.leaseDuration());
			assertThat(a.election().isLeader()).isTrue();
			assertThat(b.election().isLeader()).isFalse();
			assertThat(b.election().currentLeader().orElseThrow().candidateId()).isEqualTo("a");
			assertThat(monitor.overlaps()).isZero();
		}
	}

	@Test
	void closingTheLeaderReleasesTheLeaseSoTheFollowerTakesOverBeforeItExpires() {
		Candidate a = candidate("a", this.store);
		advanceUntil(a.election()::isLeader);
		Candidate b = candidate("b", this.store);
		advanceUntil(() -> b.election().currentLeader().isPresent());
		long term = a.election().leadership().orElseThrow().term();
		long closedAt = this.time.nanoTime();
		a.engine().close();
		assertThat(a.election().isLeader()).isFalse();
		assertThat(a.events().reasons()).containsExactly(RevocationReason.SHUTDOWN);
		advanceUntil(b.election()::isLeader);
		// A lease that was not released would keep b waiting for the whole lease
		// duration.
		assertThat(Duration.ofNanos(this.time.nanoTime() - closedAt)).isLessThan(TIMING.leaseDuration());
		assertThat(b.election().leadership().orElseThrow().term()).isGreaterThan(term);
	}

	@Test
	void aPausedLeaderWakesUpAsFollowerBeforeAnyThreadRuns() {
		Candidate a = candidate("a", this.store);
		advanceUntil(a.election()::isLeader);
		// A pause (GC, SIGSTOP) moves the monotonic clock while no thread of ours runs.
		this.time.pause(TIMING.renewDeadline());
		assertThat(a.election().isLeader()).isFalse();
		assertThat(a.election().leadership()).isEmpty();
	}

	@Test
	void anOutageShorterThanTheRenewDeadlineChangesNothing() {
		FaultyLeaseStore aStore = this.engines.faulty(new FaultyLeaseStore(this.store));
		Candidate a = candidate("a", aStore);
		advanceUntil(a.election()::isLeader);
		long term = a.election().leadership().orElseThrow().term();
		int callsBefore = aStore.calls.get();
		aStore.fail();
		long outageEnds = this.time.nanoTime() + TIMING.renewDeadline().toNanos() / 3;
		while (this.time.nanoTime() < outageEnds) {
			assertThat(a.election().isLeader()).isTrue();
			advance(STEP);
		}
		aStore.heal();
		assertThat(aStore.calls.get()).as("renewals attempted during the outage").isGreaterThan(callsBefore);
		advance(TIMING.renewDeadline());
		assertThat(a.election().isLeader()).isTrue();
		assertThat(a.election().leadership().orElseThrow().term()).isEqualTo(term);
		assertThat(a.delivered().revocations).isEmpty();
	}

	@Test
	void storeErrorsPastTheRenewDeadlineRevokeAndTheElectionRecovers() {
		FaultyLeaseStore aStore = this.engines.faulty(new FaultyLeaseStore(this.store));
		Candidate a = candidate("a", aStore);
		advanceUntil(a.election()::isLeader);
		long term = a.election().leadership().orElseThrow().term();
		aStore.fail();
		advanceUntil(() -> !a.election().isLeader());
		assertThat(a.delivered().revocations).isNotEmpty();
		assertThat(a.events().reasons()).containsExactly(RevocationReason.STORE_ERROR);
		aStore.heal();
		advanceUntil(a.election()::isLeader);
		assertThat(a.election().leadership().orElseThrow().term()).isGreaterThan(term);
	}

	@Test
	void revocationIsDeliveredOnlyAfterIsLeaderTurnedFalse() {
		FaultyLeaseStore aStore = this.engines.faulty(new FaultyLeaseStore(this.store));
		Candidate a = candidate("a", aStore);
		advanceUntil(a.election()::isLeader);
		aStore.fail();
		advanceUntil(() -> !a.election().isLeader());
		assertThat(a.delivered().revocations).isNotEmpty();
		a.election().yieldLeadership();
		a.engine().close();
		assertThat(a.events().revocations)
			.allSatisfy((revocation) -> assertThat(revocation.stillLeaderWhenDelivered()).isFalse());
	}

	@Test
	void aThrowingOrSlowListenerNeitherDelaysRenewalNorStopsTheElection() throws Exception {
		CountDownLatch slowListenerMayReturn = new CountDownLatch(1);
		LeaderElectionListener throwing = new LeaderElectionListener() {
			@Override
			public void granted(Leadership leadership) {
				throw new IllegalStateException("listener failure (expected by the test)");
			}
		};
		LeaderElectionListener slow = new LeaderElectionListener() {
			@Override
			public void granted(Leadership leadership) {
				try {
					// Slower than two leases, the whole time the test watches.
					slowListenerMayReturn.await(30, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		};
		try {
			LeaderElectionEngine engine = this.engines.engine("a", this.store, throwing, slow);
			LeaderElection election = engine.join(GROUP);
			engine.start();
			advanceUntil(election::isLeader);
			long term = election.leadership().orElseThrow().term();
			long until = this.time.nanoTime() + TIMING.leaseDuration().multipliedBy(2).toNanos();
			while (this.time.nanoTime() < until) {
				assertThat(election.isLeader()).isTrue();
				advance(STEP);
			}
			assertThat(election.leadership().orElseThrow().term()).isEqualTo(term);
		}
		finally {
			slowListenerMayReturn.countDown();
		}
	}

	@Test
	void yieldingHandsLeadershipToAnotherCandidate() throws Exception {
		Candidate a = candidate("a", this.store);
		advanceUntil(a.election()::isLeader);
		Candidate b = candidate("b", this.store);
		advanceUntil(() -> b.election().currentLeader().isPresent());
		long term = a.election().leadership().orElseThrow().term();
		try (OverlapMonitor monitor = new OverlapMonitor(List.of(a.election(), b.election()),
				LeaderElection::isLeader)) {
			assertThat(a.election().yieldLeadership()).isTrue();
			assertThat(a.election().isLeader()).isFalse();
			advanceUntil(b.election()::isLeader);
			assertThat(monitor.overlaps()).isZero();
		}
		assertThat(b.election().leadership().orElseThrow().term()).isGreaterThan(term);
		assertThat(a.delivered().reasons()).containsExactly(RevocationReason.YIELDED);
		assertThat(a.election().yieldLeadership()).isFalse();
	}

	@Test
	void forcingAnotherLeaderNeverGivesTwoLeadersAndRaisesTheTerm() throws Exception {
		// Without push the old leader learns of the change only at its next renewal,
		// which is exactly when a new leader acting at once would overlap it.
		LeaseStore polling = this.engines.faulty(new FaultyLeaseStore(this.store, false));
		Candidate a = candidate("a", polling);
		advanceUntil(a.election()::isLeader);
		Candidate b = candidate("b", polling);
		Candidate c = candidate("c", polling);
		advanceUntil(() -> b.election().currentLeader().isPresent() && c.election().currentLeader().isPresent());
		long term = a.election().leadership().orElseThrow().term();
		try (OverlapMonitor monitor = new OverlapMonitor(List.of(a.election(), b.election(), c.election()),
				LeaderElection::isLeader)) {
			// Asked from a third instance: a learns it at its next renewal.
			c.election().forceLeader("b");
			advanceUntil(b.election()::isLeader);
			assertThat(monitor.overlaps()).isZero();
		}
		assertThat(a.delivered().reasons()).containsExactly(RevocationReason.FORCED_ELSEWHERE);
		assertThat(b.election().leadership().orElseThrow().term()).isGreaterThan(term);
		assertThat(c.election().isLeader()).isFalse();
	}

	@Test
	void forcingAReelectionRevokesTheLeaderAndElectsWithAGreaterTerm() throws Exception {
		LeaseStore polling = this.engines.faulty(new FaultyLeaseStore(this.store, false));
		Candidate a = candidate("a", polling);
		advanceUntil(a.election()::isLeader);
		Candidate b = candidate("b", polling);
		advanceUntil(() -> b.election().currentLeader().isPresent());
		long term = a.election().leadership().orElseThrow().term();
		try (OverlapMonitor monitor = new OverlapMonitor(List.of(a.election(), b.election()),
				LeaderElection::isLeader)) {
			// Asked from the follower: the leader learns it at its next renewal.
			b.election().forceReelection();
			advanceUntil(() -> !a.election().isLeader());
			assertThat(a.delivered().revocations).isNotEmpty();
			advanceUntil(() -> a.election()
				.leadership()
				.or(b.election()::leadership)
				.filter((l) -> l.term() > term)
				.isPresent());
			assertThat(monitor.overlaps()).isZero();
		}
		assertThat(a.delivered().reasons()).containsExactly(RevocationReason.FORCED_ELSEWHERE);
	}

	@Test
	void aRenewalRefusedWhileTheStoreStillNamesUsIsALostLeaseNotAForcedChange() {
		FaultyLeaseStore aStore = this.engines.faulty(new FaultyLeaseStore(this.store));
		Candidate a = candidate("a", aStore);
		advanceUntil(a.election()::isLeader);
		aStore.refuseRenewals();
		advanceUntil(() -> !a.election().isLeader());
		assertThat(a.delivered().revocations).isNotEmpty();
		assertThat(a.events().reasons().get(0)).isEqualTo(RevocationReason.LEASE_LOST);
		aStore.heal();
	}

	@Test
	void aStoreThatKeepsRefusingRenewalsDoesNotMakeTheLeaderFlap() {
		FaultyLeaseStore aStore = this.engines.faulty(new FaultyLeaseStore(this.store));
		Candidate a = candidate("a", aStore);
		advanceUntil(a.election()::isLeader);
		aStore.refuseRenewals();
		// The store still names a, so a takes the lease again each time and loses it at
		// its first renewal: at most once per retry period, never over and over at one
		// instant (which the scheduler reports as a task storm).
		advance(TIMING.retryPeriod().multipliedBy(20));
		assertThat(a.delivered().grantedTerms).hasSizeLessThanOrEqualTo(1 + 20 + 1);
	}

	@Test
	void aLeadershipStopsBeingValidWhenItsTermEnds() {
		Candidate a = candidate("a", this.store);
		advanceUntil(a.election()::isLeader);
		Leadership first = a.election().leadership().orElseThrow();
		a.election().forceReelection();
		assertThat(first.isValid()).isFalse();
		advanceUntil(a.election()::isLeader);
		assertThat(first.isValid()).isFalse();
		assertThat(a.election().leadership().orElseThrow().isValid()).isTrue();
	}

	@Test
	void termsOnlyGrowAcrossRestartsYieldsAndForcedChanges() {
		long lastTerm = 0;
		for (int round = 0; round < 3; round++) {
			Candidate a = candidate("a" + round, this.store);
			advanceUntil(a.election()::isLeader);
			long term = a.election().leadership().orElseThrow().term();
			assertThat(term).isGreaterThan(lastTerm);
			a.election().forceReelection();
			advanceUntil(a.election()::isLeader);
			long reelected = a.election().leadership().orElseThrow().term();
			assertThat(reelected).isGreaterThan(term);
			a.engine().close();
			lastTerm = reelected;
		}
	}

	@Test
	void aThousandGroupsShareAFixedNumberOfThreads() {
		// The engine's own threads: real time. Those of engines closed by other tests end
		// first, so that only this engine's are counted.
		await().atMost(Duration.ofSeconds(30)).until(() -> electionThreads() == 0);
		TestEngines onOwnThreads = new TestEngines(null);
		try {
			LeaderElectionEngine engine = onOwnThreads.engine("a", new InMemoryLeaseStore());
			List<LeaderElection> elections = new ArrayList<>();
			for (int i = 0; i < 1000; i++) {
				elections.add(engine.join("group-" + i));
			}
			engine.start();
			await().atMost(Duration.ofSeconds(60)).until(() -> elections.stream().allMatch(LeaderElection::isLeader));
			long electionThreads = electionThreads();
			// One timer, two store threads and at most four event threads (which end when
			// idle), whatever the number of groups.
			assertThat(electionThreads).isLessThanOrEqualTo(1 + 2 + 4);
		}
		finally {
			onOwnThreads.close();
		}
	}

	@Test
	void statusReportsTheLeaderAndAStoreThatStoppedAnswering() {
		FaultyLeaseStore aStore = this.engines.faulty(new FaultyLeaseStore(this.store));
		Candidate a = candidate("a", aStore);
		advanceUntil(a.election()::isLeader);
		// Only now: started together, b could take the group first and keep it.
		Candidate b = candidate("b", this.store);
		advanceUntil(() -> b.engine().status(GROUP).flatMap(ElectionStatus::currentLeader).isPresent());
		ElectionStatus leader = a.engine().status(GROUP).orElseThrow();
		assertThat(leader.leader()).isTrue();
		assertThat(leader.beliefRemaining()).hasValueSatisfying((d) -> assertThat(d).isPositive());
		assertThat(leader.backend()).isEqualTo("faulty-in-memory");
		ElectionStatus follower = b.engine().status(GROUP).orElseThrow();
		assertThat(follower.leader()).isFalse();
		assertThat(follower.currentLeader().orElseThrow().candidateId()).isEqualTo("a");
		assertThat(b.engine().isStoreUnreachable(GROUP)).isFalse();
		assertThat(a.engine().isStoreUnreachable(GROUP)).isFalse();
		aStore.fail();
		advanceUntil(() -> a.engine().isStoreUnreachable(GROUP));
		assertThat(a.engine().status(GROUP).orElseThrow().consecutiveFailures()).isPositive();
		aStore.heal();
		advanceUntil(() -> !a.engine().isStoreUnreachable(GROUP));
		assertThat(a.engine().status("unknown")).isEmpty();
	}

	@Test
	void groupsJoinedAfterStartStartCompetingAtOnce() {
		Candidate a = candidate("a", this.store);
		LeaderElection late = a.engine().join("late");
		advanceUntil(late::isLeader);
		assertThat(a.engine().join("late")).isSameAs(late);
		assertThat(a.engine().find("late")).contains(late);
		assertThat(a.engine().elections()).hasSize(2);
	}

	@Test
	void unsafeNamesAreRejected() {
		LeaderElectionEngine engine = this.engines.engine("a", this.store);
		assertThatIllegalArgumentException().isThrownBy(() -> engine.join(" ")).withMessageContaining("group");
		assertThatIllegalArgumentException().isThrownBy(() -> engine.join("a\nb")).withMessageContaining("control");
		assertThatIllegalArgumentException().isThrownBy(() -> engine.join("x".repeat(256)))
			.withMessageContaining("255");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LeaderElectionEngine.builder(this.store).candidateId("").build())
			.withMessageContaining("candidate id");
	}

	@Test
	void aClosedEngineCannotBeJoinedOrRestarted() {
		LeaderElectionEngine engine = this.engines.engine("a", this.store);
		engine.close();
		assertThatIllegalStateException().isThrownBy(() -> engine.join(GROUP)).withMessageContaining("closed");
		assertThatIllegalStateException().isThrownBy(engine::start).withMessageContaining("closed");
	}

	@Test
	void defaultCandidateIdsAreUniquePerEngine() {
		assertThat(LeaderElectionEngine.defaultCandidateId()).isNotEqualTo(LeaderElectionEngine.defaultCandidateId())
			.contains(Long.toString(ProcessHandle.current().pid()));
	}

	private static long electionThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.isAlive() && thread.getName().startsWith("leader-election-"))
			.count();
	}

	private Candidate candidate(String id, LeaseStore store) {
		Candidate candidate = this.engines.candidate(id, store);
		this.candidates.add(candidate);
		return candidate;
	}

	/** Moves time forward step by step, checking after each that one candidate leads. */
	private void advance(Duration duration) {
		long end = this.time.nanoTime() + duration.toNanos();
		while (this.time.nanoTime() < end) {
			step(Duration.ofNanos(Math.min(STEP.toNanos(), end - this.time.nanoTime())));
		}
	}

	/**
	 * Moves time forward step by step until the condition holds, at most {@link #WAIT}.
	 */
	private void advanceUntil(BooleanSupplier condition) {
		this.time.advanceUntil(() -> {
			checkOneLeader();
			return condition.getAsBoolean();
		}, STEP, WAIT);
	}

	private void step(Duration duration) {
		this.time.advance(duration);
		checkOneLeader();
	}

	private void checkOneLeader() {
		List<String> leaders = this.candidates.stream()
			.filter((candidate) -> candidate.election().isLeader())
			.map((candidate) -> candidate.election().candidateId())
			.toList();
		assertThat(leaders).as("candidates leading group '%s' at once", GROUP).hasSizeLessThanOrEqualTo(1);
	}

}
