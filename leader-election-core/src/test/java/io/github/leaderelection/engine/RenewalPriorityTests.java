package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import io.github.leaderelection.spi.Lease;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hand-over of many groups queues their releases on the engine's store threads. The
 * renewal of the groups the leader keeps must not wait behind them: it would reach its
 * deadline while the store answers well, and the leader would lose a group it meant to
 * keep (seen in a fault-harness run, where a burst of work on the store threads held a
 * renewal round back 1.2 s). On virtual time, on store threads modelled as the engine's
 * own are ({@link StoreThreads}: two, renewals first, each kind in the order submitted),
 * where a call keeps its thread busy for the time it takes.
 */
class RenewalPriorityTests {

	private static final ElectionTiming TIMING = new ElectionTiming(Duration.ofMillis(1200), Duration.ofMillis(600),
			Duration.ofMillis(100));

	/** Releases queued: 24 x 100 ms on the 2 store threads, twice the renew deadline. */
	private static final int HANDED_OVER = 24;

	private static final Duration RELEASE_TAKES = Duration.ofMillis(100);

	private static final Duration STEP = Duration.ofMillis(10);

	private static final Duration WAIT = Duration.ofSeconds(30);

	private final VirtualElectionScheduler time = new VirtualElectionScheduler();

	private final VirtualStoreThreads storeThreads = new VirtualStoreThreads(this.time, 2);

	private final List<LeaderElectionEngine> engines = new ArrayList<>();

	@AfterEach
	void closeEngines() {
		this.engines.forEach(LeaderElectionEngine::close);
	}

	@Test
	void aLeaderKeepsTheGroupsItDoesNotHandOverWhileTheReleasesOfThoseItDoesQueueUp() {
		AtomicInteger released = new AtomicInteger();
		ForwardingLeaseStore slowReleases = new ForwardingLeaseStore(new InMemoryLeaseStore(this.time::nanoTime)) {

			@Override
			public void release(Lease lease, Duration timeout) {
				RenewalPriorityTests.this.storeThreads.callTakes(RELEASE_TAKES);
				super.release(lease, timeout);
				released.incrementAndGet();
			}

		};
		List<String> revokedKept = new CopyOnWriteArrayList<>();
		LeaderElectionEngine engine = LeaderElectionEngine.builder(slowReleases)
			.candidateId("a")
			.timing(TIMING)
			.scheduler(this.storeThreads)
			.listener(new LeaderElectionListener() {

				@Override
				public void revoked(Leadership leadership, RevocationReason reason) {
					if (leadership.group().equals("kept")) {
						revokedKept.add(reason.name());
					}
				}

			})
			.build();
		this.engines.add(engine);
		LeaderElection kept = engine.join("kept");
		List<LeaderElection> handedOver = new ArrayList<>();
		for (int i = 0; i < HANDED_OVER; i++) {
			handedOver.add(engine.join("group-" + i));
		}
		engine.start();
		this.time.advanceUntil(() -> kept.isLeader() && handedOver.stream().allMatch(LeaderElection::isLeader), STEP,
				WAIT);
		long term = kept.leadership().orElseThrow().term();

		handedOver.forEach(LeaderElection::yieldLeadership);
		long yielded = this.time.nanoTime();
		this.time.advanceUntil(() -> released.get() >= HANDED_OVER && this.storeThreads.isIdle(), STEP, WAIT);
		assertThat(Duration.ofNanos(this.time.nanoTime() - yielded)).as("time the releases kept the threads busy")
			.isGreaterThanOrEqualTo(TIMING.renewDeadline().multipliedBy(2));

		assertThat(engine.notifier().awaitDelivered(Duration.ofSeconds(15))).as("events delivered").isTrue();
		assertThat(revokedKept).as("revocations of the group kept while %d releases queued", HANDED_OVER).isEmpty();
		assertThat(kept.isLeader()).isTrue();
		assertThat(kept.leadership().orElseThrow().term()).isEqualTo(term);
	}

	/**
	 * Store threads on virtual time, ordered as {@link StoreThreads}: a task waits for a
	 * free thread, renewals ahead of the others, each kind in the order submitted. A task
	 * runs at the instant it gets a thread and keeps it busy for as long as its store
	 * call says it takes ({@link #callTakes}); the timer is the virtual scheduler's.
	 */
	private static final class VirtualStoreThreads implements ElectionScheduler {

		private final VirtualElectionScheduler time;

		private final long[] busyUntil;

		private final PriorityQueue<Waiting> waiting = new PriorityQueue<>();

		private long submitted;

		private long taking;

		VirtualStoreThreads(VirtualElectionScheduler time, int threads) {
			this.time = time;
			this.busyUntil = new long[threads];
			Arrays.fill(this.busyUntil, time.nanoTime());
		}

		/** Called from within a store call: it keeps its thread busy this long. */
		void callTakes(Duration duration) {
			this.taking += duration.toNanos();
		}

		/** No task waits, and every thread is free. */
		synchronized boolean isIdle() {
			return this.waiting.isEmpty() && freeThreads() == this.busyUntil.length;
		}

		@Override
		public long nanoTime() {
			return this.time.nanoTime();
		}

		@Override
		public Future<?> schedule(Runnable task, long delayNanos) {
			return this.time.schedule(task, delayNanos);
		}

		@Override
		public void execute(Runnable task) {
			submit(task, false);
		}

		@Override
		public void executeFirst(Runnable task) {
			submit(task, true);
		}

		private synchronized void submit(Runnable task, boolean first) {
			this.waiting.add(new Waiting(task, first, ++this.submitted));
			this.time.execute(this::dispatch);
		}

		/** Hands the tasks waiting to the threads free now, on the test's thread. */
		private void dispatch() {
			int thread = freeThread();
			while (thread >= 0) {
				Waiting next;
				synchronized (this) {
					next = this.waiting.poll();
				}
				if (next == null) {
					return;
				}
				long now = this.time.nanoTime();
				this.taking = 0;
				next.task().run();
				this.busyUntil[thread] = now + this.taking;
				if (this.taking > 0) {
					this.time.schedule(this::dispatch, this.taking);
				}
				thread = freeThread();
			}
		}

		private int freeThreads() {
			long now = this.time.nanoTime();
			return (int) Arrays.stream(this.busyUntil).filter((until) -> until - now <= 0).count();
		}

		private int freeThread() {
			long now = this.time.nanoTime();
			for (int thread = 0; thread < this.busyUntil.length; thread++) {
				if (this.busyUntil[thread] - now <= 0) {
					return thread;
				}
			}
			return -1;
		}

		private record Waiting(Runnable task, boolean first, long sequence) implements Comparable<Waiting> {

			@Override
			public int compareTo(Waiting other) {
				if (this.first != other.first) {
					return this.first ? -1 : 1;
				}
				return Long.compare(this.sequence, other.sequence);
			}

		}

	}

}
