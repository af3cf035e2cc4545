package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The engine's store threads run the tasks that renew leases ahead of those waiting, and
 * each kind in the order submitted.
 */
class StoreThreadsTests {

	private final StoreThreads threads = new StoreThreads(1, Executors.defaultThreadFactory());

	@AfterEach
	void shutDown() {
		this.threads.shutdownNow();
	}

	@Test
	void renewalsRunAheadOfTheTasksWaitingAndEachKindInTheOrderSubmitted() throws Exception {
		CountDownLatch busy = new CountDownLatch(1);
		CountDownLatch running = new CountDownLatch(1);
		List<String> ran = new CopyOnWriteArrayList<>();
		this.threads.execute(() -> {
			running.countDown();
			waitFor(busy);
		});
		assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
		this.threads.execute(() -> ran.add("release 1"));
		this.threads.execute(() -> ran.add("read"));
		this.threads.executeFirst(() -> ran.add("renewal 1"));
		this.threads.execute(() -> ran.add("release 2"));
		this.threads.executeFirst(() -> ran.add("renewal 2"));
		busy.countDown();
		await().atMost(Duration.ofSeconds(10)).until(() -> ran.size() == 5);
		assertThat(ran).containsExactly("renewal 1", "renewal 2", "release 1", "read", "release 2");
	}

	private static void waitFor(CountDownLatch latch) {
		try {
			latch.await(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
