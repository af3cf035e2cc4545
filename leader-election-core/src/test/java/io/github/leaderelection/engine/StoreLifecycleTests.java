package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The engine's part in a store's lifecycle: a store may take its time to set up a watch
 * (a listening connection), and that holds up nobody; every watch the engine opened is
 * closed when it stops, including one that was still being set up.
 */
class StoreLifecycleTests {

	private static final ElectionTiming TIMING = new ElectionTiming(Duration.ofSeconds(6), Duration.ofSeconds(4),
			Duration.ofMillis(500));

	private static final Duration WAIT = Duration.ofSeconds(30);

	private final SlowWatchStore store = new SlowWatchStore();

	private LeaderElectionEngine engine;

	@AfterEach
	void release() {
		this.store.watchMayOpen.countDown();
		if (this.engine != null) {
			this.engine.close();
		}
	}

	@Test
	void aWatchThatTakesItsTimeHoldsUpNeitherStartNorTheElection() throws Exception {
		LeaderElection orders = start();
		// start() returned although the watch is still being set up, and the candidate
		// elects by polling meanwhile.
		assertThat(this.store.watchCalled.await(30, TimeUnit.SECONDS)).isTrue();
		await().atMost(WAIT).until(orders::isLeader);
		assertThat(orders.currentLeader()).isPresent();
		this.store.watchMayOpen.countDown();
		await().atMost(WAIT).until(() -> this.store.opened.get() == 1);
		this.engine.close();
		assertThat(this.store.closed.get()).as("watches closed").isEqualTo(1);
	}

	@Test
	void aWatchOpenedAfterTheEngineStoppedIsClosed() throws Exception {
		start();
		assertThat(this.store.watchCalled.await(30, TimeUnit.SECONDS)).isTrue();
		CompletableFuture.runAsync(this.engine::close).get(30, TimeUnit.SECONDS);
		this.store.watchMayOpen.countDown();
		await().atMost(WAIT).until(() -> this.store.opened.get() == 1);
		await().atMost(WAIT).until(() -> this.store.closed.get() == 1);
	}

	private LeaderElection start() throws Exception {
		this.engine = LeaderElectionEngine.builder(this.store).candidateId("a").timing(TIMING).build();
		LeaderElection orders = this.engine.join("orders");
		// On another thread, so that a start() held up by the watch fails the test
		// rather than hanging it.
		CompletableFuture.runAsync(this.engine::start).get(30, TimeUnit.SECONDS);
		return orders;
	}

	/** A store whose watch is set up only once the test lets it. */
	private static final class SlowWatchStore extends ForwardingLeaseStore {

		final CountDownLatch watchCalled = new CountDownLatch(1);

		final CountDownLatch watchMayOpen = new CountDownLatch(1);

		final AtomicInteger opened = new AtomicInteger();

		final AtomicInteger closed = new AtomicInteger();

		SlowWatchStore() {
			super(new InMemoryLeaseStore());
		}

		@Override
		public AutoCloseable watch(String group, Runnable onChange) {
			this.watchCalled.countDown();
			try {
				this.watchMayOpen.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			AutoCloseable watch = super.watch(group, onChange);
			this.opened.incrementAndGet();
			return () -> {
				this.closed.incrementAndGet();
				watch.close();
			};
		}

	}

}
