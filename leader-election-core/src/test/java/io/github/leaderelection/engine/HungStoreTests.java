package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.engine.TestEngines.Candidate;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.testing.OverlapMonitor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.github.leaderelection.engine.TestEngines.GROUP;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The engine against a store whose calls hang. On virtual time, a hung call moves the
 * clock from within until the test lets it go on, and what falls due meanwhile runs as it
 * would on the engine's other threads. Closing while a call hangs is about the engine's
 * own threads, and is tested on them, in real time, with a generous bound.
 */
class HungStoreTests {

	private static final Duration WAIT = Duration.ofSeconds(15);

	private static final Duration STEP = Duration.ofMillis(10);

	/**
	 * Shorter than the other tests' timing: closing is tested in real time.
	 */
	private static final ElectionTiming TIMING = new ElectionTiming(Duration.ofMillis(1500), Duration.ofMillis(1000),
			Duration.ofMillis(100));

	private final VirtualElectionScheduler time = new VirtualElectionScheduler();

	private final InMemoryLeaseStore store = new InMemoryLeaseStore(this.time::nanoTime);

	private final TestEngines engines = new TestEngines(this.time, TIMING);

	/** The candidates of the group, checked at every step for two leaders at once. */
	private final List<LeaderElection> candidates = new ArrayList<>();

	private int samples;

	private int overlaps;

	@AfterEach
	void closeEngines() {
		this.engines.close();
	}

	@Test
	void aLeaderPausedPastItsLeaseNeverOverlapsTheNextLeader() throws Exception {
		FaultyLeaseStore aStore = this.engines.faulty(new FaultyLeaseStore(this.store));
		Candidate a = candidate("a", aStore);
		advanceUntil(a.election()::isLeader);
		long firstTerm = a.election().leadership().orElseThrow().term();
		Candidate b = candidate("b", this.store);
		try (OverlapMonitor monitor = new OverlapMonitor(List.of(a.election(), b.election()),
				LeaderElection::isLeader)) {
			// a can no longer reach the store, as if it were paused, until b leads; the
			// hung renewal then reaches a store where b holds the lease.
			aStore.hangUntil(this.time, () -> {
				checkOneLeader();
				return b.election().isLeader();
			});
			advanceUntil(() -> !aStore.isHanging() && b.election().isLeader());
			advanceUntil(() -> !a.delivered().revocations.isEmpty());
			advance(TIMING.retryPeriod().multipliedBy(2));
			assertThat(monitor.overlaps()).isZero();
			assertThat(monitor.samples()).isPositive();
		}
		assertThat(this.overlaps).as("steps in which both led").isZero();
		assertThat(this.samples).as("steps checked").isPositive();
		assertThat(a.election().isLeader()).isFalse();
		assertThat(b.election().leadership().orElseThrow().term()).isGreaterThan(firstTerm);
	}

	@Test
	void aHungStoreCallMakesTheLeaderStepDownOnTime() {
		FaultyLeaseStore aStore = this.engines.faulty(new FaultyLeaseStore(this.store));
		Candidate a = candidate("a", aStore);
		advanceUntil(a.election()::isLeader);
		long hung = this.time.nanoTime();
		AtomicLong steppedDownAfter = new AtomicLong(-1);
		AtomicBoolean hangingThen = new AtomicBoolean();
		// The step-down needs nothing from the store: the deadline passes while the call
		// still hangs, and the call goes on only once a has stepped down.
		aStore.hangUntil(this.time, () -> {
			if (a.election().isLeader()) {
				return false;
			}
			if (steppedDownAfter.compareAndSet(-1, this.time.nanoTime() - hung)) {
				hangingThen.set(aStore.isHanging());
			}
			return true;
		});
		advanceUntil(() -> steppedDownAfter.get() >= 0);
		// (How soon after the deadline is for the benchmarks; this bound only rules out
		// waiting on the store or on the lease.)
		assertThat(Duration.ofNanos(steppedDownAfter.get())).isLessThanOrEqualTo(TIMING.renewDeadline().plusSeconds(5));
		advanceUntil(() -> !a.delivered().revocations.isEmpty());
		assertThat(a.events().reasons()).containsExactly(RevocationReason.STORE_ERROR);
		assertThat(hangingThen).as("a call hung when the leader stepped down").isTrue();
	}

	@Test
	void closingDoesNotHangOnAStoreThatHangs() {
		FaultyLeaseStore aStore = new FaultyLeaseStore(new InMemoryLeaseStore());
		LeaderElectionEngine engine = LeaderElectionEngine.builder(aStore)
			.candidateId("a")
			.timing(TIMING)
			.shutdownTimeout(Duration.ofMillis(100))
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

	private Candidate candidate(String id, LeaseStore store) {
		Candidate candidate = this.engines.candidate(id, store);
		this.candidates.add(candidate.election());
		return candidate;
	}

	private void advance(Duration duration) {
		long end = this.time.nanoTime() + duration.toNanos();
		advanceUntil(() -> this.time.nanoTime() - end >= 0);
	}

	/** Moves time forward step by step until the condition holds, checking each step. */
	private void advanceUntil(BooleanSupplier condition) {
		this.time.advanceUntil(() -> {
			checkOneLeader();
			return condition.getAsBoolean();
		}, STEP, WAIT);
	}

	private void checkOneLeader() {
		long leaders = this.candidates.stream().filter(LeaderElection::isLeader).count();
		this.samples++;
		if (leaders > 1) {
			this.overlaps++;
		}
	}

}
