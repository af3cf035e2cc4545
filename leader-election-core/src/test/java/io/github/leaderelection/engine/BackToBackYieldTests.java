package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.engine.TestEngines.Candidate;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A yields, B takes over and yields soon after: A, whose stay-out window ends first, must
 * lead next, not B. A used to wait a retry period past its window (and ignore the release
 * it was told of meanwhile), so B, once out of its own window, took the group back about
 * half the time. On virtual time; repeated, since each candidate starts its rounds at a
 * random phase.
 */
class BackToBackYieldTests {

	private static final ElectionTiming TIMING = new ElectionTiming(Duration.ofSeconds(6), Duration.ofSeconds(4),
			Duration.ofSeconds(1));

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final Duration STEP = Duration.ofMillis(1);

	private final VirtualElectionScheduler time = new VirtualElectionScheduler();

	private final List<LeaderElectionEngine> engines = new ArrayList<>();

	@AfterEach
	void closeEngines() {
		this.engines.forEach(LeaderElectionEngine::close);
	}

	@RepeatedTest(4)
	void theFirstToYieldLeadsAgainWhenTheOtherYieldsToo() {
		InMemoryLeaseStore store = new InMemoryLeaseStore(this.time::nanoTime);
		LeaderElection a = start(store, "a");
		advanceUntil(this.time, a::isLeader);
		LeaderElection b = start(store, "b");
		a.yieldLeadership();
		advanceUntil(this.time, b::isLeader);
		// B leads for half a retry period, so its window ends well after A's.
		this.time.advance(Duration.ofMillis(500));
		b.yieldLeadership();
		advanceUntil(this.time, () -> a.isLeader() || b.isLeader());
		assertThat(a.isLeader()).as("the first to yield leads again").isTrue();
		assertThat(b.isLeader()).isFalse();
	}

	/**
	 * A's stay-out after its yield is for another candidate to have the first try. Once B
	 * was granted the group, that is done: when B hands the group back at once, A takes
	 * it then, not when its own window ends (on ZooKeeper, where A is next in line,
	 * nobody else can, so the group waited out A's window without a leader).
	 */
	@RepeatedTest(2)
	void theFirstToYieldTakesTheGroupAtOnceWhenTheOtherHandsItBackWithinItsWindow() {
		ElectionTiming slow = new ElectionTiming(Duration.ofSeconds(12), Duration.ofSeconds(8), Duration.ofSeconds(3));
		InMemoryLeaseStore store = new InMemoryLeaseStore(this.time::nanoTime);
		LeaderElection a = start(store, "a", slow);
		advanceUntil(this.time, a::isLeader);
		LeaderElection b = start(store, "b", slow);
		long yielded = this.time.nanoTime();
		a.yieldLeadership();
		advanceUntil(this.time, b::isLeader);
		b.yieldLeadership();
		long handedBack = this.time.nanoTime();
		advanceUntil(this.time, a::isLeader);
		long waited = this.time.nanoTime() - handedBack;
		// A's window (2 retry periods, 6 s) would have kept it out until 6 s after its
		// yield.
		long windowLeft = Duration.ofSeconds(6).toNanos() - (handedBack - yielded);
		assertThat(windowLeft).isGreaterThan(Duration.ofSeconds(3).toNanos());
		assertThat(Duration.ofNanos(waited)).isLessThan(Duration.ofSeconds(2));
	}

	/**
	 * As above, on a store that does not tell A when B hands the group back (ZooKeeper
	 * tells only the candidate next in line, a polling store nobody): A, which saw the
	 * lease free during its window, must look again within a retry period and take it,
	 * not wait out its window with the group leaderless.
	 */
	@Test
	void theFirstToYieldTakesTheGroupWithinARetryPeriodWhenNotToldThatTheOtherHandedItBack() {
		VirtualElectionScheduler time = new VirtualElectionScheduler();
		InMemoryLeaseStore store = new InMemoryLeaseStore(time::nanoTime);
		try (TestEngines engines = new TestEngines(time)) {
			Candidate a = engines.candidate("a", new ToldOnlyOfItsOwnChanges(store));
			advanceUntil(time, () -> a.election().isLeader());
			Candidate b = engines.candidate("b", store);
			advanceUntil(time, () -> b.engine().isRunning());
			a.election().yieldLeadership();
			advanceUntil(time, () -> b.election().isLeader());
			time.advance(Duration.ofMillis(20));
			b.election().yieldLeadership();
			long handedBack = time.nanoTime();
			advanceUntil(time, () -> a.election().isLeader());
			// A's window is 2 retry periods (500 ms) from its yield: it would have taken
			// the group about 480 ms after B handed it back.
			assertThat(Duration.ofNanos(time.nanoTime() - handedBack)).as("time until A takes the group back")
				.isLessThanOrEqualTo(TestEngines.TIMING.retryPeriod().plusMillis(20));
		}
	}

	private static void advanceUntil(VirtualElectionScheduler time, BooleanSupplier condition) {
		time.advanceUntil(condition, STEP, TIMEOUT);
	}

	private LeaderElection start(InMemoryLeaseStore store, String candidateId) {
		return start(store, candidateId, TIMING);
	}

	private LeaderElection start(InMemoryLeaseStore store, String candidateId, ElectionTiming timing) {
		LeaderElectionEngine engine = LeaderElectionEngine.builder(store)
			.candidateId(candidateId)
			.timing(timing)
			.scheduler(this.time)
			.build();
		this.engines.add(engine);
		LeaderElection election = engine.join("orders");
		engine.start();
		return election;
	}

	/**
	 * Tells the candidate of the changes it made itself (releasing or taking the lease),
	 * and of nothing else.
	 */
	private static final class ToldOnlyOfItsOwnChanges extends ForwardingLeaseStore {

		private final List<Runnable> watchers = new CopyOnWriteArrayList<>();

		ToldOnlyOfItsOwnChanges(LeaseStore delegate) {
			super(delegate);
		}

		@Override
		public AutoCloseable watch(String group, Runnable onChange) {
			this.watchers.add(onChange);
			return () -> this.watchers.remove(onChange);
		}

		@Override
		public void release(Lease lease, Duration timeout) {
			super.release(lease, timeout);
			this.watchers.forEach(Runnable::run);
		}

	}

}
