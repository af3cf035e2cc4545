package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import io.github.leaderelection.testing.OverlapMonitor;
import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;

import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Behaviour of the election engine against an in-memory store with injected faults.
 * Durations are short but every wait has a generous bound: these tests check what
 * happens, not how fast.
 */
class LeaderElectionEngineTests {

	private static final ElectionTiming TIMING = new ElectionTiming(Duration.ofMillis(3000), Duration.ofMillis(2000),
			Duration.ofMillis(250));

	private static final Duration WAIT = Duration.ofSeconds(15);

	private static final String GROUP = "orders";

	private final InMemoryLeaseStore store = new InMemoryLeaseStore();

	private final List<LeaderElectionEngine> engines = new ArrayList<>();

	private final List<FaultyLeaseStore> faultyStores = new ArrayList<>();

	@AfterEach
	void closeEngines() {
		this.faultyStores.forEach(FaultyLeaseStore::heal);
		this.engines.forEach(LeaderElectionEngine::close);
	}

	@Test
	void singleCandidateBecomesLeaderAndIsToldSo() {
		Candidate a = candidate("a", this.store);
		await().atMost(WAIT).until(a.election::isLeader);
		await().atMost(WAIT).until(() -> a.events.grantedTerms.size() == 1);
		Leadership leadership = a.election.leadership().orElseThrow();
		assertThat(leadership.term()).isEqualTo(a.events.grantedTerms.get(0)).isPositive();
		assertThat(leadership.isValid()).isTrue();
		assertThat(a.election.currentLeader()).hasValueSatisfying((leader) -> {
			assertThat(leader.candidateId()).isEqualTo("a");
			assertThat(leader.term()).isEqualTo(leadership.term());
		});
	}

	@Test
	void twoCandidatesElectOneAndTheFollowerSeesIt() throws Exception {
		Candidate a = candidate("a", this.store);
		await().atMost(WAIT).until(a.election::isLeader);
		Candidate b = candidate("b", this.store);
		try (OverlapMonitor monitor = new OverlapMonitor(List.of(a.election, b.election), LeaderElection::isLeader)) {
			await().atMost(WAIT).until(() -> b.election.currentLeader().isPresent());
			Thread.sleep(TIMING.leaseDuration().toMillis());
			assertThat(a.election.isLeader()).isTrue();
			assertThat(b.election.isLeader()).isFalse();
			assertThat(b.election.currentLeader().orElseThrow().candidateId()).isEqualTo("a");
			assertThat(monitor.overlaps()).isZero();
		}
	}

	@Test
	void closingTheLeaderReleasesTheLeaseSoTheFollowerTakesOverBeforeItExpires() {
		Candidate a = candidate("a", this.store);
		await().atMost(WAIT).until(a.election::isLeader);
		Candidate b = candidate("b", this.store);
		await().atMost(WAIT).until(() -> b.election.currentLeader().isPresent());
		long term = a.election.leadership().orElseThrow().term();
		long closedAt = System.nanoTime();
		a.engine.close();
		assertThat(a.election.isLeader()).isFalse();
		assertThat(a.events.reasons()).containsExactly(RevocationReason.SHUTDOWN);
		await().atMost(WAIT).until(b.election::isLeader);
		// A lease that was not released would keep b waiting for the whole lease
		// duration.
		assertThat(Duration.ofNanos(System.nanoTime() - closedAt)).isLessThan(TIMING.leaseDuration());
		assertThat(b.election.leadership().orElseThrow().term()).isGreaterThan(term);
	}

	@Test
	void aPausedLeaderWakesUpAsFollowerBeforeAnyThreadRuns() {
		OffsetClock clock = new OffsetClock();
		Candidate a = candidate("a", this.store, clock);
		await().atMost(WAIT).until(a.election::isLeader);
		// A pause (GC, SIGSTOP) moves the monotonic clock while no thread of ours runs.
		clock.jump(TIMING.renewDeadline());
		assertThat(a.election.isLeader()).isFalse();
		assertThat(a.election.leadership()).isEmpty();
	}

	@Test
	void aLeaderPausedPastItsLeaseNeverOverlapsTheNextLeader() throws Exception {
		FaultyLeaseStore aStore = faulty(new FaultyLeaseStore(this.store));
		Candidate a = candidate("a", aStore);
		await().atMost(WAIT).until(a.election::isLeader);
		long firstTerm = a.election.leadership().orElseThrow().term();
		Candidate b = candidate("b", this.store);
		try (OverlapMonitor monitor = new OverlapMonitor(List.of(a.election, b.election), LeaderElection::isLeader)) {
			aStore.hang(); // a can no longer reach the store, as if it were paused
			await().atMost(WAIT).until(b.election::isLeader);
			aStore.heal(); // the hung renewal now reaches a store where b holds the lease
			await().atMost(WAIT).until(() -> !a.events.revocations.isEmpty());
			Thread.sleep(2 * TIMING.retryPeriod().toMillis());
			assertThat(monitor.overlaps()).isZero();
			assertThat(monitor.samples()).isPositive();
		}
		assertThat(a.election.isLeader()).isFalse();
		assertThat(b.election.leadership().orElseThrow().term()).isGreaterThan(firstTerm);
	}

	@Test
	void anOutageShorterThanTheRenewDeadlineChangesNothing() throws Exception {
		FaultyLeaseStore aStore = faulty(new FaultyLeaseStore(this.store));
		Candidate a = candidate("a", aStore);
		await().atMost(WAIT).until(a.election::isLeader);
		long term = a.election.leadership().orElseThrow().term();
		int callsBefore = aStore.calls.get();
		aStore.fail();
		long outageEnds = System.nanoTime() + TIMING.renewDeadline().toNanos() / 3;
		while (System.nanoTime() < outageEnds) {
			assertThat(a.election.isLeader()).isTrue();
			Thread.sleep(10);
		}
		aStore.heal();
		assertThat(aStore.calls.get()).as("renewals attempted during the outage").isGreaterThan(callsBefore);
		Thread.sleep(TIMING.renewDeadline().toMillis());
		assertThat(a.election.isLeader()).isTrue();
		assertThat(a.election.leadership().orElseThrow().term()).isEqualTo(term);
		assertThat(a.events.revocations).isEmpty();
	}

	@Test
	void storeErrorsPastTheRenewDeadlineRevokeAndTheElectionRecovers() {
		FaultyLeaseStore aStore = faulty(new FaultyLeaseStore(this.store));
		Candidate a = candidate("a", aStore);
		await().atMost(WAIT).until(a.election::isLeader);
		long term = a.election.leadership().orElseThrow().term();
		aStore.fail();
		await().atMost(WAIT).until(() -> !a.election.isLeader());
		await().atMost(WAIT).until(() -> !a.events.revocations.isEmpty());
		assertThat(a.events.reasons()).containsExactly(RevocationReason.STORE_ERROR);
		aStore.heal();
		await().atMost(WAIT).until(a.election::isLeader);
		assertThat(a.election.leadership().orElseThrow().term()).isGreaterThan(term);
	}

	@Test
	void aHungStoreCallMakesTheLeaderStepDownOnTime() {
		FaultyLeaseStore aStore = faulty(new FaultyLeaseStore(this.store));
		Candidate a = candidate("a", aStore);
		await().atMost(WAIT).until(a.election::isLeader);
		aStore.hang();
		// The step-down needs nothing from the store: the deadline passes while the call
		// still hangs.
		// (How soon after the deadline is for the benchmarks; this bound only rules out
		// waiting on
		// the store or on the lease.)
		await().atMost(TIMING.renewDeadline().plusSeconds(5)).until(() -> !a.election.isLeader());
		await().atMost(WAIT).until(() -> !a.events.revocations.isEmpty());
		assertThat(a.events.reasons()).containsExactly(RevocationReason.STORE_ERROR);
		assertThat(aStore.isHanging()).isTrue();
		aStore.heal();
	}

	@Test
	void closingDoesNotHangOnAStoreThatHangs() {
		FaultyLeaseStore aStore = faulty(new FaultyLeaseStore(this.store));
		LeaderElectionEngine engine = LeaderElectionEngine.builder(aStore)
			.candidateId("a")
			.timing(TIMING)
			.shutdownTimeout(Duration.ofSeconds(1))
			.build();
		LeaderElection election = engine.join(GROUP);
		engine.start();
		await().atMost(WAIT).until(election::isLeader);
		aStore.hang();
		try {
			long start = System.nanoTime();
			engine.close();
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(8));
			assertThat(election.isLeader()).isFalse();
		}
		finally {
			aStore.heal();
		}
	}

	@Test
	void revocationIsDeliveredOnlyAfterIsLeaderTurnedFalse() {
		FaultyLeaseStore aStore = faulty(new FaultyLeaseStore(this.store));
		Candidate a = candidate("a", aStore);
		await().atMost(WAIT).until(a.election::isLeader);
		aStore.fail();
		await().atMost(WAIT).until(() -> !a.events.revocations.isEmpty());
		a.election.yieldLeadership();
		a.engine.close();
		assertThat(a.events.revocations)
			.allSatisfy((revocation) -> assertThat(revocation.stillLeaderWhenDelivered()).isFalse());
	}

	@Test
	void aThrowingOrSlowListenerNeitherDelaysRenewalNorStopsTheElection() throws Exception {
		LeaderElectionListener throwing = new LeaderElectionListener() {
			@Override
			public void granted(Leadership leadership) {
				throw new IllegalStateException("listener failure (expected by the test)");
			}
		};
		LeaderElectionListener slow = new LeaderElectionListener() {
			@Override
			public void granted(Leadership leadership) {
				sleep(TIMING.leaseDuration().multipliedBy(2));
			}
		};
		LeaderElectionEngine engine = engine("a", this.store, System::nanoTime, throwing, slow);
		LeaderElection election = engine.join(GROUP);
		engine.start();
		await().atMost(WAIT).until(election::isLeader);
		long term = election.leadership().orElseThrow().term();
		long until = System.nanoTime() + TIMING.leaseDuration().multipliedBy(2).toNanos();
		while (System.nanoTime() < until) {
			assertThat(election.isLeader()).isTrue();
			Thread.sleep(10);
		}
		assertThat(election.leadership().orElseThrow().term()).isEqualTo(term);
	}

	@Test
	void yieldingHandsLeadershipToAnotherCandidate() throws Exception {
		Candidate a = candidate("a", this.store);
		await().atMost(WAIT).until(a.election::isLeader);
		Candidate b = candidate("b", this.store);
		await().atMost(WAIT).until(() -> b.election.currentLeader().isPresent());
		long term = a.election.leadership().orElseThrow().term();
		try (OverlapMonitor monitor = new OverlapMonitor(List.of(a.election, b.election), LeaderElection::isLeader)) {
			assertThat(a.election.yieldLeadership()).isTrue();
			assertThat(a.election.isLeader()).isFalse();
			await().atMost(WAIT).until(b.election::isLeader);
			assertThat(monitor.overlaps()).isZero();
		}
		assertThat(b.election.leadership().orElseThrow().term()).isGreaterThan(term);
		assertThat(a.events.reasons()).containsExactly(RevocationReason.YIELDED);
		assertThat(a.election.yieldLeadership()).isFalse();
	}

	@Test
	void forcingAnotherLeaderNeverGivesTwoLeadersAndRaisesTheTerm() throws Exception {
		// Without push the old leader learns of the change only at its next renewal,
		// which is
		// exactly when a new leader acting at once would overlap it.
		LeaseStore polling = faulty(new FaultyLeaseStore(this.store, false));
		Candidate a = candidate("a", polling);
		await().atMost(WAIT).until(a.election::isLeader);
		Candidate b = candidate("b", polling);
		Candidate c = candidate("c", polling);
		await().atMost(WAIT)
			.until(() -> b.election.currentLeader().isPresent() && c.election.currentLeader().isPresent());
		long term = a.election.leadership().orElseThrow().term();
		try (OverlapMonitor monitor = new OverlapMonitor(List.of(a.election, b.election, c.election),
				LeaderElection::isLeader)) {
			// Asked from a third instance: a learns it at its next renewal.
			c.election.forceLeader("b");
			await().atMost(WAIT).until(b.election::isLeader);
			assertThat(monitor.overlaps()).isZero();
		}
		assertThat(a.events.reasons()).containsExactly(RevocationReason.FORCED_ELSEWHERE);
		assertThat(b.election.leadership().orElseThrow().term()).isGreaterThan(term);
		assertThat(c.election.isLeader()).isFalse();
	}

	@Test
	void forcingAReelectionRevokesTheLeaderAndElectsWithAGreaterTerm() throws Exception {
		LeaseStore polling = faulty(new FaultyLeaseStore(this.store, false));
		Candidate a = candidate("a", polling);
		await().atMost(WAIT).until(a.election::isLeader);
		Candidate b = candidate("b", polling);
		await().atMost(WAIT).until(() -> b.election.currentLeader().isPresent());
		long term = a.election.leadership().orElseThrow().term();
		try (OverlapMonitor monitor = new OverlapMonitor(List.of(a.election, b.election), LeaderElection::isLeader)) {
			// Asked from the follower: the leader learns it at its next renewal.
			b.election.forceReelection();
			await().atMost(WAIT).until(() -> !a.events.revocations.isEmpty());
			await().atMost(WAIT)
				.until(() -> a.election.leadership()
					.or(b.election::leadership)
					.filter((l) -> l.term() > term)
					.isPresent());
			assertThat(monitor.overlaps()).isZero();
		}
		assertThat(a.events.reasons()).containsExactly(RevocationReason.FORCED_ELSEWHERE);
	}

	@Test
	void aRenewalRefusedWhileTheStoreStillNamesUsIsALostLeaseNotAForcedChange() {
		FaultyLeaseStore aStore = faulty(new FaultyLeaseStore(this.store));
		Candidate a = candidate("a", aStore);
		await().atMost(WAIT).until(a.election::isLeader);
		aStore.refuseRenewals();
		await().atMost(WAIT).until(() -> !a.events.revocations.isEmpty());
		assertThat(a.events.reasons().get(0)).isEqualTo(RevocationReason.LEASE_LOST);
		aStore.heal();
	}

	@Test
	void aLeadershipStopsBeingValidWhenItsTermEnds() {
		Candidate a = candidate("a", this.store);
		await().atMost(WAIT).until(a.election::isLeader);
		Leadership first = a.election.leadership().orElseThrow();
		a.election.forceReelection();
		assertThat(first.isValid()).isFalse();
		await().atMost(WAIT).until(a.election::isLeader);
		assertThat(first.isValid()).isFalse();
		assertThat(a.election.leadership().orElseThrow().isValid()).isTrue();
	}

	@Test
	void termsOnlyGrowAcrossRestartsYieldsAndForcedChanges() {
		long lastTerm = 0;
		for (int round = 0; round < 3; round++) {
			Candidate a = candidate("a" + round, this.store);
			await().atMost(WAIT).until(a.election::isLeader);
			long term = a.election.leadership().orElseThrow().term();
			assertThat(term).isGreaterThan(lastTerm);
			a.election.forceReelection();
			await().atMost(WAIT).until(a.election::isLeader);
			long reelected = a.election.leadership().orElseThrow().term();
			assertThat(reelected).isGreaterThan(term);
			a.engine.close();
			lastTerm = reelected;
		}
	}

	@Test
	void aThousandGroupsShareAFixedNumberOfThreads() {
		LeaderElectionEngine engine = engine("a", this.store, System::nanoTime);
		List<LeaderElection> elections = new ArrayList<>();
		for (int i = 0; i < 1000; i++) {
			elections.add(engine.join("group-" + i));
		}
		engine.start();
		await().atMost(Duration.ofSeconds(60)).until(() -> elections.stream().allMatch(LeaderElection::isLeader));
		long electionThreads = Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().startsWith("leader-election-"))
			.count();
		// One timer, two store threads and at most four event threads (which end when
		// idle), whatever the number of groups.
		assertThat(electionThreads).isLessThanOrEqualTo(1 + 2 + 4);
	}

	@Test
	void statusReportsTheLeaderAndAStoreThatStoppedAnswering() {
		FaultyLeaseStore aStore = faulty(new FaultyLeaseStore(this.store));
		Candidate a = candidate("a", aStore);
		await().atMost(WAIT).until(a.election::isLeader);
		// Only now: started together, b could take the group first and keep it.
		Candidate b = candidate("b", this.store);
		await().atMost(WAIT).until(() -> b.engine.status(GROUP).flatMap(ElectionStatus::currentLeader).isPresent());
		ElectionStatus leader = a.engine.status(GROUP).orElseThrow();
		assertThat(leader.leader()).isTrue();
		assertThat(leader.beliefRemaining()).hasValueSatisfying((d) -> assertThat(d).isPositive());
		assertThat(leader.backend()).isEqualTo("faulty-in-memory");
		ElectionStatus follower = b.engine.status(GROUP).orElseThrow();
		assertThat(follower.leader()).isFalse();
		assertThat(follower.currentLeader().orElseThrow().candidateId()).isEqualTo("a");
		assertThat(b.engine.isStoreUnreachable(GROUP)).isFalse();
		assertThat(a.engine.isStoreUnreachable(GROUP)).isFalse();
		aStore.fail();
		await().atMost(WAIT).until(() -> a.engine.isStoreUnreachable(GROUP));
		assertThat(a.engine.status(GROUP).orElseThrow().consecutiveFailures()).isPositive();
		aStore.heal();
		await().atMost(WAIT).until(() -> !a.engine.isStoreUnreachable(GROUP));
		assertThat(a.engine.status("unknown")).isEmpty();
	}

	@Test
	void groupsJoinedAfterStartStartCompetingAtOnce() {
		Candidate a = candidate("a", this.store);
		LeaderElection late = a.engine.join("late");
		await().atMost(WAIT).until(late::isLeader);
		assertThat(a.engine.join("late")).isSameAs(late);
		assertThat(a.engine.find("late")).contains(late);
		assertThat(a.engine.elections()).hasSize(2);
	}

	@Test
	void unsafeNamesAreRejected() {
		LeaderElectionEngine engine = engine("a", this.store, System::nanoTime);
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
		LeaderElectionEngine engine = engine("a", this.store, System::nanoTime);
		engine.close();
		assertThatIllegalStateException().isThrownBy(() -> engine.join(GROUP)).withMessageContaining("closed");
		assertThatIllegalStateException().isThrownBy(engine::start).withMessageContaining("closed");
	}

	@Test
	void defaultCandidateIdsAreUniquePerEngine() {
		assertThat(LeaderElectionEngine.defaultCandidateId()).isNotEqualTo(LeaderElectionEngine.defaultCandidateId())
			.contains(Long.toString(ProcessHandle.current().pid()));
	}

	private Candidate candidate(String id, LeaseStore store) {
		return candidate(id, store, System::nanoTime);
	}

	private Candidate candidate(String id, LeaseStore store, LongSupplier clock) {
		RecordingListener events = new RecordingListener();
		LeaderElectionEngine engine = engine(id, store, clock, events);
		LeaderElection election = engine.join(GROUP);
		events.watching(election);
		engine.start();
		return new Candidate(engine, election, events);
	}

	private LeaderElectionEngine engine(String id, LeaseStore store, LongSupplier clock,
			LeaderElectionListener... listeners) {
		LeaderElectionEngine.Builder builder = LeaderElectionEngine.builder(store)
			.candidateId(id)
			.timing(TIMING)
			.nanoClock(clock);
		for (LeaderElectionListener listener : listeners) {
			builder.listener(listener);
		}
		LeaderElectionEngine engine = builder.build();
		this.engines.add(engine);
		return engine;
	}

	private FaultyLeaseStore faulty(FaultyLeaseStore store) {
		this.faultyStores.add(store);
		return store;
	}

	private static void sleep(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private record Candidate(LeaderElectionEngine engine, LeaderElection election, RecordingListener events) {
	}

	/**
	 * The monotonic clock plus an offset a test can move forward, as a process pause
	 * does.
	 */
	static final class OffsetClock implements LongSupplier {

		private final AtomicLong offset = new AtomicLong();

		void jump(Duration duration) {
			this.offset.addAndGet(duration.toNanos());
		}

		@Override
		public long getAsLong() {
			return System.nanoTime() + this.offset.get();
		}

	}

}
