package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.List;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.engine.TestEngines.Candidate;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.testing.OverlapMonitor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.github.leaderelection.engine.TestEngines.GROUP;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The engine against a store whose calls hang, in real time and on the engine's own
 * threads: a call that never returns is something only real threads show (on a
 * {@link VirtualElectionScheduler} it would hang the test). Every wait has a generous
 * bound: these tests check what happens, not how fast.
 */
class HungStoreTests {

	private static final Duration WAIT = Duration.ofSeconds(15);

	/**
	 * Shorter than the other tests' timing: these tests wait a lease out in real time.
	 */
	private static final ElectionTiming TIMING = new ElectionTiming(Duration.ofMillis(1500), Duration.ofMillis(1000),
			Duration.ofMillis(100));

	private final InMemoryLeaseStore store = new InMemoryLeaseStore();

	private final TestEngines engines = new TestEngines(null, TIMING);

	@AfterEach
	void closeEngines() {
		this.engines.close();
	}

	@Test
	void aLeaderPausedPastItsLeaseNeverOverlapsTheNextLeader() throws Exception {
		FaultyLeaseStore aStore = this.engines.faulty(new FaultyLeaseStore(this.store));
		Candidate a = this.engines.candidate("a", aStore);
		await().atMost(WAIT).until(a.election()::isLeader);
		long firstTerm = a.election().leadership().orElseThrow().term();
		Candidate b = this.engines.candidate("b", this.store);
		try (OverlapMonitor monitor = new OverlapMonitor(List.of(a.election(), b.election()),
				LeaderElection::isLeader)) {
			aStore.hang(); // a can no longer reach the store, as if it were paused
			await().atMost(WAIT).until(b.election()::isLeader);
			aStore.heal(); // the hung renewal now reaches a store where b holds the lease
			await().atMost(WAIT).until(() -> !a.events().revocations.isEmpty());
			Thread.sleep(2 * TIMING.retryPeriod().toMillis());
			assertThat(monitor.overlaps()).isZero();
			assertThat(monitor.samples()).isPositive();
		}
		assertThat(a.election().isLeader()).isFalse();
		assertThat(b.election().leadership().orElseThrow().term()).isGreaterThan(firstTerm);
	}

	@Test
	void aHungStoreCallMakesTheLeaderStepDownOnTime() {
		FaultyLeaseStore aStore = this.engines.faulty(new FaultyLeaseStore(this.store));
		Candidate a = this.engines.candidate("a", aStore);
		await().atMost(WAIT).until(a.election()::isLeader);
		aStore.hang();
		// The step-down needs nothing from the store: the deadline passes while the call
		// still hangs. (How soon after the deadline is for the benchmarks; this bound
		// only rules out waiting on the store or on the lease.)
		await().atMost(TIMING.renewDeadline().plusSeconds(5)).until(() -> !a.election().isLeader());
		await().atMost(WAIT).until(() -> !a.events().revocations.isEmpty());
		assertThat(a.events().reasons()).containsExactly(RevocationReason.STORE_ERROR);
		assertThat(aStore.isHanging()).isTrue();
		aStore.heal();
	}

	@Test
	void closingDoesNotHangOnAStoreThatHangs() {
		FaultyLeaseStore aStore = this.engines.faulty(new FaultyLeaseStore(this.store));
		LeaderElectionEngine engine = LeaderElectionEngine.builder(aStore)
			.candidateId("a")
			.timing(TIMING)
			.shutdownTimeout(Duration.ofMillis(300))
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

}
