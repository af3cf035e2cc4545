package io.github.leaderelection.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.LeadershipContext;
import io.github.leaderelection.OnlyOnLeader;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.Lease;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.aop.framework.ProxyFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link OnlyOnLeaderInterceptor} on an engine without Spring's context.
 */
class OnlyOnLeaderInterceptorTests {

	private final InMemoryLeaseStore store = new InMemoryLeaseStore();

	private final LeaderElectionEngine engine = LeaderElectionEngine.builder(this.store)
		.candidateId("node-1")
		.shutdownTimeout(Duration.ofSeconds(20))
		.build();

	private final OnlyOnLeaderInterceptor interceptor = new OnlyOnLeaderInterceptor(() -> this.engine, () -> "default",
			() -> Duration.ofSeconds(20));

	private final Job target = new Job();

	private final Job job = proxy(this.target);

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void returnsEmptyOrDefaultValueForSkippedCalls() {
		assertThat(OnlyOnLeaderInterceptor.skippedResult(void.class)).isNull();
		assertThat(OnlyOnLeaderInterceptor.skippedResult(String.class)).isNull();
		assertThat(OnlyOnLeaderInterceptor.skippedResult(Optional.class)).isEqualTo(Optional.empty());
		assertThat(OnlyOnLeaderInterceptor.skippedResult(OptionalInt.class)).isEqualTo(OptionalInt.empty());
		assertThat(OnlyOnLeaderInterceptor.skippedResult(OptionalLong.class)).isEqualTo(OptionalLong.empty());
		assertThat(OnlyOnLeaderInterceptor.skippedResult(OptionalDouble.class)).isEqualTo(OptionalDouble.empty());
		assertThat(OnlyOnLeaderInterceptor.skippedResult(boolean.class)).isEqualTo(false);
		assertThat(OnlyOnLeaderInterceptor.skippedResult(char.class)).isEqualTo('\0');
		assertThat(OnlyOnLeaderInterceptor.skippedResult(byte.class)).isEqualTo((byte) 0);
		assertThat(OnlyOnLeaderInterceptor.skippedResult(short.class)).isEqualTo((short) 0);
		assertThat(OnlyOnLeaderInterceptor.skippedResult(int.class)).isEqualTo(0);
		assertThat(OnlyOnLeaderInterceptor.skippedResult(long.class)).isEqualTo(0L);
		assertThat(OnlyOnLeaderInterceptor.skippedResult(float.class)).isEqualTo(0f);
		assertThat(OnlyOnLeaderInterceptor.skippedResult(double.class)).isEqualTo(0d);
	}

	@Test
	void joinsGroupOfFirstCallWhenNotJoinedBefore() {
		assertThat(this.engine.find("late")).isEmpty();
		assertThat(this.job.late()).isNull();
		assertThat(this.engine.find("late")).isPresent();
	}

	@Test
	void waitsOnShutdownUntilRunningCallReturnsBeforeReleasingLease() throws Exception {
		LeaderElection election = startLeading();
		CompletableFuture<Void> call = CompletableFuture.runAsync(this.job::block);
		assertThat(this.target.started.await(20, TimeUnit.SECONDS)).isTrue();
		CompletableFuture<Void> closing = CompletableFuture.runAsync(this.engine::close);
		await().atMost(Duration.ofSeconds(20)).until(() -> !election.isLeader());
		Thread.sleep(200);
		assertThat(closing).isNotDone();
		assertThat(holder()).contains("node-1");
		this.target.release.countDown();
		call.get(20, TimeUnit.SECONDS);
		closing.get(20, TimeUnit.SECONDS);
		assertThat(holder()).isEmpty();
	}

	@Test
	void doesNotInterruptThreadOfCallThatAlreadyReturned() {
		LeaderElection election = startLeading();
		assertThat(this.job.interruptible()).isEqualTo("ran");
		election.yieldLeadership();
		await().pollDelay(Duration.ofMillis(200)).atMost(Duration.ofSeconds(5)).until(() -> true);
		assertThat(Thread.interrupted()).isFalse();
	}

	@Test
	void interruptsNestedCallsOnRevokeAndLeavesTheThreadWithoutTheInterrupt() throws Exception {
		LeaderElection election = startLeading();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			CompletableFuture<String> outer = CompletableFuture.supplyAsync(this.job::outerInterruptible, executor);
			assertThat(this.target.started.await(20, TimeUnit.SECONDS)).isTrue();
			election.yieldLeadership();
			assertThat(outer.get(20, TimeUnit.SECONDS)).isEqualTo("inner interrupted, outer context restored");
			assertThat(CompletableFuture.supplyAsync(() -> Thread.currentThread().isInterrupted(), executor)
				.get(20, TimeUnit.SECONDS)).isFalse();
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void interruptsCallsOfManyThreadsOnRevoke() throws Exception {
		LeaderElection election = startLeading();
		// More threads than the interceptor has slots, so that some calls are in its
		// overflow set.
		int threads = 48;
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch started = new CountDownLatch(threads);
			List<CompletableFuture<Boolean>> calls = new ArrayList<>();
			for (int i = 0; i < threads; i++) {
				calls.add(CompletableFuture.supplyAsync(() -> this.job.awaitInterrupt(started), executor));
			}
			assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
			election.yieldLeadership();
			for (CompletableFuture<Boolean> call : calls) {
				assertThat(call.get(20, TimeUnit.SECONDS)).isTrue();
			}
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void waitsOnShutdownForNestedCallsOfManyThreads() throws Exception {
		startLeading();
		int threads = 48;
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch started = new CountDownLatch(threads);
			CountDownLatch release = new CountDownLatch(1);
			AtomicInteger finished = new AtomicInteger();
			List<CompletableFuture<Void>> calls = new ArrayList<>();
			for (int i = 0; i < threads; i++) {
				calls.add(
						CompletableFuture.runAsync(() -> this.job.outerBlocking(started, release, finished), executor));
			}
			assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
			CompletableFuture<Void> closing = CompletableFuture.runAsync(this.engine::close);
			Thread.sleep(300);
			assertThat(closing).isNotDone();
			assertThat(holder()).contains("node-1");
			release.countDown();
			closing.get(20, TimeUnit.SECONDS);
			assertThat(finished).hasValue(threads);
			assertThat(holder()).isEmpty();
			CompletableFuture.allOf(calls.toArray(new CompletableFuture<?>[0])).get(20, TimeUnit.SECONDS);
		}
		finally {
			executor.shutdownNow();
		}
	}

	/**
	 * Not deterministic: calls start while terms end and begin, so that some revocations
	 * fall between a call's check and its registration. Once the interceptor has handled
	 * the revocation of a term (a listener added after it has been told), a call of that
	 * term that still runs must have been interrupted.
	 */
	@Test
	void noCallOfARevokedTermRunsUninterruptedAfterTheRevocation() throws Exception {
		InMemoryLeaseStore fastStore = new InMemoryLeaseStore();
		Set<Long> revokedTerms = ConcurrentHashMap.newKeySet();
		try (LeaderElectionEngine fast = LeaderElectionEngine.builder(fastStore)
			.candidateId("node-1")
			.timing(new ElectionTiming(Duration.ofMillis(600), Duration.ofMillis(400), Duration.ofMillis(100)))
			.build()) {
			OnlyOnLeaderInterceptor interceptor = new OnlyOnLeaderInterceptor(() -> fast, () -> "default",
					() -> Duration.ofSeconds(20));
			fast.addListener(interceptor);
			fast.addListener(new LeaderElectionListener() {
				@Override
				public void revoked(Leadership leadership, RevocationReason reason) {
					revokedTerms.add(leadership.term());
				}
			});
			Job racing = new Job();
			racing.revokedTerms = revokedTerms;
			Job proxy = proxy(racing, interceptor);
			LeaderElection election = fast.join("default");
			fast.start();
			AtomicBoolean stop = new AtomicBoolean();
			int threads = 4;
			ExecutorService executor = Executors.newFixedThreadPool(threads);
			try {
				List<CompletableFuture<Void>> callers = new ArrayList<>();
				for (int i = 0; i < threads; i++) {
					callers.add(CompletableFuture.runAsync(() -> {
						while (!stop.get()) {
							proxy.checkRevokedTerm();
							Thread.interrupted();
						}
					}, executor));
				}
				long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
				while (System.nanoTime() < end) {
					await().atMost(Duration.ofSeconds(20)).until(election::isLeader);
					Thread.sleep(20);
					election.yieldLeadership();
				}
				stop.set(true);
				CompletableFuture.allOf(callers.toArray(new CompletableFuture<?>[0])).get(20, TimeUnit.SECONDS);
			}
			finally {
				stop.set(true);
				executor.shutdownNow();
			}
			assertThat(revokedTerms).hasSizeGreaterThan(3);
			assertThat(racing.runs).hasPositiveValue();
			assertThat(racing.uninterruptedAfterRevocation).hasValue(0);
		}
	}

	private LeaderElection startLeading() {
		LeaderElection election = this.engine.join("default");
		this.engine.addListener(this.interceptor);
		this.engine.start();
		await().atMost(Duration.ofSeconds(20)).until(election::isLeader);
		return election;
	}

	private Optional<String> holder() {
		return this.store.read("default", Duration.ofSeconds(1)).map(Lease::holder);
	}

	private Job proxy(Job target) {
		return proxy(target, this.interceptor);
	}

	private static Job proxy(Job target, OnlyOnLeaderInterceptor interceptor) {
		ProxyFactory factory = new ProxyFactory(target);
		factory.setProxyTargetClass(true);
		factory.addAdvisor(new OnlyOnLeaderAdvisor(interceptor));
		Job proxy = (Job) factory.getProxy();
		target.self = proxy;
		return proxy;
	}

	public static class Job {

		final CountDownLatch started = new CountDownLatch(1);

		final CountDownLatch release = new CountDownLatch(1);

		final AtomicInteger runs = new AtomicInteger();

		final AtomicInteger uninterruptedAfterRevocation = new AtomicInteger();

		Set<Long> revokedTerms = Set.of();

		/** The proxy, for nested calls. */
		Job self;

		@OnlyOnLeader(group = "late")
		public String late() {
			return "ran";
		}

		@OnlyOnLeader
		public void block() {
			this.started.countDown();
			try {
				this.release.await(20, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

		@OnlyOnLeader(interruptOnRevoke = true)
		public String interruptible() {
			return "ran";
		}

		@OnlyOnLeader(interruptOnRevoke = true)
		public String outerInterruptible() {
			Leadership outer = LeadershipContext.current().orElseThrow();
			boolean interrupted = this.self.innerAwaitInterrupt();
			boolean restored = LeadershipContext.current().orElseThrow() == outer;
			return (interrupted ? "inner interrupted" : "inner not interrupted") + ", outer context "
					+ (restored ? "restored" : "lost");
		}

		@OnlyOnLeader(interruptOnRevoke = true)
		public boolean innerAwaitInterrupt() {
			this.started.countDown();
			return spinUntilInterrupted();
		}

		@OnlyOnLeader(interruptOnRevoke = true)
		public boolean awaitInterrupt(CountDownLatch started) {
			started.countDown();
			return spinUntilInterrupted();
		}

		/**
		 * Counts its end inside the leader-only call, which a shutdown waits for: counted
		 * by the caller after the call returned, an end could come after the shutdown's.
		 */
		@OnlyOnLeader
		public void outerBlocking(CountDownLatch started, CountDownLatch release, AtomicInteger finished) {
			this.self.innerBlocking(started, release);
			finished.incrementAndGet();
		}

		@OnlyOnLeader
		public void innerBlocking(CountDownLatch started, CountDownLatch release) {
			started.countDown();
			try {
				release.await(20, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

		@OnlyOnLeader(interruptOnRevoke = true)
		public void checkRevokedTerm() {
			this.runs.incrementAndGet();
			long term = LeadershipContext.current().orElseThrow().term();
			for (int i = 0; i < 1000; i++) {
				Thread.onSpinWait();
			}
			// Read in this order: once the term is known revoked here, the interceptor
			// has already interrupted this thread (it ran before the listener that
			// recorded the term).
			if (this.revokedTerms.contains(term) && !Thread.currentThread().isInterrupted()) {
				this.uninterruptedAfterRevocation.incrementAndGet();
			}
		}

		private static boolean spinUntilInterrupted() {
			long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
			while (!Thread.currentThread().isInterrupted() && System.nanoTime() < deadline) {
				Thread.onSpinWait();
			}
			return Thread.currentThread().isInterrupted();
		}

	}

}
