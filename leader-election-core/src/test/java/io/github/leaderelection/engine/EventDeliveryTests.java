package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * How the engine delivers leadership changes: one group's in order, different groups'
 * independently, so that a listener slow over one group (a leader-only bean that takes
 * its time to stop) holds up no other; and a closed engine leaves no thread behind.
 */
class EventDeliveryTests {

	private static final ElectionTiming TIMING = new ElectionTiming(Duration.ofSeconds(6), Duration.ofSeconds(4),
			Duration.ofMillis(100));

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final Duration STEP = Duration.ofMillis(10);

	private final CountDownLatch ordersMayStop = new CountDownLatch(1);

	private final List<String> delivered = new CopyOnWriteArrayList<>();

	private LeaderElectionEngine engine;

	@AfterEach
	void close() {
		this.ordersMayStop.countDown();
		if (this.engine != null) {
			this.engine.close();
		}
	}

	/**
	 * On virtual time: the elections wait on the test's clock, the listeners are called
	 * on the engine's event threads, in real time.
	 */
	@Test
	void aListenerSlowOverOneGroupHoldsUpOnlyThatGroup() {
		VirtualElectionScheduler time = new VirtualElectionScheduler();
		this.engine = LeaderElectionEngine.builder(new InMemoryLeaseStore(time::nanoTime))
			.candidateId("a")
			.timing(TIMING)
			.scheduler(time)
			.listener(new SlowToStopOrders())
			.build();
		LeaderElection orders = this.engine.join("orders");
		LeaderElection billing = this.engine.join("billing");
		this.engine.start();
		time.advanceUntil(() -> orders.isLeader() && billing.isLeader(), STEP, WAIT);
		await().atMost(WAIT).until(() -> this.delivered.containsAll(List.of("granted orders", "granted billing")));
		orders.yieldLeadership(); // its listener now stops until the test lets it
		time.runDueTasks();
		await().atMost(WAIT).until(() -> this.delivered.contains("stopping orders"));
		billing.yieldLeadership();
		time.runDueTasks();
		await().atMost(WAIT).until(() -> this.delivered.contains("revoked billing"));
		time.advanceUntil(billing::isLeader, STEP, WAIT);
		await().atMost(WAIT).until(() -> this.delivered.contains("granted billing 2"));
		assertThat(this.delivered).doesNotContain("revoked orders");
		// The orders group's later changes wait for its slow listener, in order.
		time.advanceUntil(orders::isLeader, STEP, WAIT);
		assertThat(this.delivered).doesNotContain("granted orders 2");
		this.ordersMayStop.countDown();
		await().atMost(WAIT).until(() -> this.delivered.contains("granted orders 2"));
		assertThat(this.delivered.indexOf("revoked orders")).isLessThan(this.delivered.indexOf("granted orders 2"));
	}

	@Test
	void closeWaitsForTheEnginesThreadsWithinTheShutdownTimeout() throws Exception {
		Set<Thread> before = Thread.getAllStackTraces().keySet();
		CountDownLatch renewing = new CountDownLatch(1);
		CountDownLatch renewMayEnd = new CountDownLatch(1);
		AtomicBoolean hold = new AtomicBoolean();
		LeaseStore store = new ForwardingLeaseStore(new InMemoryLeaseStore()) {

			@Override
			public Optional<Lease> renew(Lease lease, Duration leaseDuration, Duration timeout) {
				holdIfAsked();
				return super.renew(lease, leaseDuration, timeout);
			}

			@Override
			public Map<String, Lease> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout) {
				holdIfAsked();
				return super.renewAll(leases, leaseDuration, timeout);
			}

			private void holdIfAsked() {
				if (hold.get()) {
					renewing.countDown();
					// A driver call that does not answer to interrupts.
					while (renewMayEnd.getCount() > 0) {
						try {
							renewMayEnd.await();
						}
						catch (InterruptedException ex) {
							// ignored, as such a call would
						}
					}
				}
			}

		};
		this.engine = LeaderElectionEngine.builder(store)
			.candidateId("a")
			.timing(TIMING)
			.shutdownTimeout(Duration.ofSeconds(20))
			.build();
		LeaderElection orders = this.engine.join("orders");
		this.engine.start();
		await().atMost(WAIT).until(orders::isLeader);
		hold.set(true);
		assertThat(renewing.await(30, TimeUnit.SECONDS)).isTrue();
		AtomicReference<Thread> closer = new AtomicReference<>();
		CompletableFuture<Void> closing = CompletableFuture.runAsync(() -> {
			closer.set(Thread.currentThread());
			this.engine.close();
		});
		await().atMost(WAIT).until(() -> closer.get() != null && isWaitingForThreads(closer.get()));
		assertThat(closing).as("close() while a store call is still running").isNotDone();
		renewMayEnd.countDown();
		closing.get(30, TimeUnit.SECONDS);
		// A pool reports itself terminated from its last thread's final steps: allow
		// those their instant.
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(Thread.getAllStackTraces().keySet())
				.filteredOn((thread) -> !before.contains(thread))
				.noneMatch((thread) -> thread.getName().startsWith("leader-election-") && thread.isAlive()));
	}

	/**
	 * Waiting, within {@link LeaderElectionEngine#close()}, for the engine's threads to
	 * end.
	 */
	private static boolean isWaitingForThreads(Thread thread) {
		return thread.getState() == Thread.State.TIMED_WAITING && Arrays.stream(thread.getStackTrace())
			.anyMatch((frame) -> frame.getClassName().equals(LeaderElectionEngine.class.getName())
					&& frame.getMethodName().equals("awaitThreads"));
	}

	/** Records every change; stops the orders group's work only once the test lets it. */
	private final class SlowToStopOrders implements LeaderElectionListener {

		@Override
		public void granted(Leadership leadership) {
			String term = (leadership.term() > 1) ? " " + leadership.term() : "";
			EventDeliveryTests.this.delivered.add("granted " + leadership.group() + term);
		}

		@Override
		public void revoked(Leadership leadership, RevocationReason reason) {
			if (leadership.group().equals("orders")) {
				EventDeliveryTests.this.delivered.add("stopping orders");
				try {
					EventDeliveryTests.this.ordersMayStop.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
			EventDeliveryTests.this.delivered.add("revoked " + leadership.group());
		}

	}

}
