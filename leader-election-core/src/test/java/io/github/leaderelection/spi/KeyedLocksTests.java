package io.github.leaderelection.spi;

import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

class KeyedLocksTests {

	private final AtomicInteger created = new AtomicInteger();

	private final KeyedLocks<Counter> locks = new KeyedLocks<>(() -> {
		this.created.incrementAndGet();
		return new Counter();
	});

	@Test
	void aKeyKeepsItsStateFromCallToCall() {
		assertThat(increment("a")).isEqualTo(1);
		assertThat(increment("a")).isEqualTo(2);
		assertThat(increment("b")).isEqualTo(1);
		assertThat(this.created).hasValue(2);
	}

	@Test
	void aKeyNeverUsedIsLeftAlone() {
		assertThat(this.locks.withLockIfUsed("a", (counter) -> ++counter.value)).isEmpty();
		assertThat(this.created).hasValue(0);
		increment("a");
		assertThat(this.locks.withLockIfUsed("a", (counter) -> ++counter.value)).contains(2);
	}

	@Test
	void whatTheActionThrowsReachesTheCaller() {
		assertThatExceptionOfType(IOException.class).isThrownBy(() -> this.locks.withLock("a", (counter) -> {
			throw new IOException("refused");
		})).withMessage("refused");
		assertThatExceptionOfType(IOException.class).isThrownBy(() -> this.locks.withLockIfUsed("a", (counter) -> {
			throw new IOException("refused again");
		})).withMessage("refused again");
	}

	@Test
	void callsForOneKeyRunOneAtATimeAndForOthersAtOnce() throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(2);
		try {
			CountDownLatch holding = new CountDownLatch(1);
			CountDownLatch release = new CountDownLatch(1);
			Future<?> holder = executor.submit(() -> this.locks.withLock("a", (counter) -> {
				holding.countDown();
				release.await();
				return ++counter.value;
			}));
			assertThat(holding.await(5, TimeUnit.SECONDS)).isTrue();
			AtomicReference<Thread> waiter = new AtomicReference<>();
			Future<Integer> sameKey = executor.submit(() -> {
				waiter.set(Thread.currentThread());
				return increment("a");
			});
			assertThat(increment("b")).isEqualTo(1);
			// Waits until the call for the same key is held up, rather than for a while.
			await().atMost(Duration.ofSeconds(5)).until(() -> waiter.get() != null && isHeldUpInWithLock(waiter.get()));
			assertThat(sameKey).isNotDone();
			release.countDown();
			holder.get(5, TimeUnit.SECONDS);
			assertThat(sameKey.get(5, TimeUnit.SECONDS)).isEqualTo(2);
		}
		finally {
			executor.shutdownNow();
		}
	}

	/** Blocked on a monitor within {@link KeyedLocks#withLock}. */
	private static boolean isHeldUpInWithLock(Thread thread) {
		return thread.getState() == Thread.State.BLOCKED && Arrays.stream(thread.getStackTrace())
			.anyMatch((frame) -> frame.getClassName().equals(KeyedLocks.class.getName())
					&& frame.getMethodName().equals("withLock"));
	}

	private int increment(String key) {
		return this.locks.withLock(key, (counter) -> ++counter.value);
	}

	private static final class Counter {

		int value;

	}

}
