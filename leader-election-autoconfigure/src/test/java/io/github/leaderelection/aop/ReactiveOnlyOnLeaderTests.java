package io.github.leaderelection.aop;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.OnlyOnLeader;
import io.github.leaderelection.autoconfigure.DisabledLeaderElectionAutoConfiguration;
import io.github.leaderelection.autoconfigure.LeaderElectionAutoConfiguration;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.testing.ApplicationReady;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Leader-only methods whose work goes on after they return: those that return a
 * {@code Mono}, {@code Flux} or other deferred reactive type, gated at each subscription,
 * when their work runs, not when the publisher is obtained; and those that return a
 * {@code CompletableFuture}. Both are tracked until their work ends.
 */
class ReactiveOnlyOnLeaderTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private final InMemoryLeaseStore store = new InMemoryLeaseStore();

	private final LeaderElectionEngine engine = LeaderElectionEngine.builder(this.store)
		.candidateId("node-1")
		.shutdownTimeout(Duration.ofSeconds(20))
		.build();

	private final OnlyOnLeaderInterceptor interceptor = new OnlyOnLeaderInterceptor(() -> this.engine, () -> "default",
			() -> Duration.ofSeconds(20));

	private final ReactiveJobs target = new ReactiveJobs();

	private final ReactiveJobs jobs = proxy(this.target);

	@AfterEach
	void close() {
		this.target.mayEnd.countDown();
		this.engine.close();
	}

	@Test
	void aScheduledMonoRunsOnTheLeaderAtEveryTriggerAndNeverOnAFollower() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class,
					DisabledLeaderElectionAutoConfiguration.class, TaskSchedulingAutoConfiguration.class))
			.withUserConfiguration(ScheduledConfiguration.class)
			.run((context) -> {
				ScheduledReactiveJobs jobs = context.getBean(ScheduledReactiveJobs.class);
				// Spring obtains each publisher once, at startup, before any election.
				await().atMost(WAIT).until(() -> jobs.ticks() >= 3);
				assertThat(jobs.leaderRuns()).isZero();
				ApplicationReady.publish(context);
				await().atMost(WAIT).until(() -> jobs.leaderRuns() >= 3);
				assertThat(jobs.leaderCalls()).as("method calls, one per run").isEqualTo(jobs.leaderRuns());
				assertThat(jobs.followerRuns()).isZero();
				assertThat(jobs.followerCalls()).isZero();
			});
	}

	@Test
	void aPublisherObtainedOnAFollowerRunsOnceThisInstanceLeads() {
		Mono<String> work = this.jobs.once();
		assertThat(work.block(WAIT)).as("subscribed while following").isNull();
		assertThat(this.target.calls.get()).isZero();
		startLeading();
		assertThat(work.block(WAIT)).isEqualTo("ran in term 1");
		assertThat(work.block(WAIT)).isEqualTo("ran in term 1");
		assertThat(this.target.calls.get()).isEqualTo(2);
	}

	@Test
	void aRevocationCancelsTheWorkOfAMethodThatAsksForInterruption() {
		LeaderElection election = startLeading();
		AtomicReference<String> ended = new AtomicReference<>();
		Disposable subscription = this.jobs.endlessInterruptible()
			.doOnCancel(() -> ended.set("cancelled"))
			.doOnComplete(() -> ended.set("completed"))
			.subscribe();
		await().atMost(WAIT).until(() -> this.target.emitted.get() > 0);
		election.yieldLeadership();
		await().atMost(WAIT).until(() -> ended.get() != null);
		assertThat(ended.get()).as("what the subscriber saw").isEqualTo("completed");
		assertThat(this.target.upstreamCancelled.get()).isTrue();
		subscription.dispose();
	}

	@Test
	void aRevocationLeavesTheWorkOfOtherMethodsRunning() {
		LeaderElection election = startLeading();
		Disposable subscription = this.jobs.endlessUninterruptible().subscribe();
		try {
			await().atMost(WAIT).until(() -> this.target.emitted.get() > 0);
			election.yieldLeadership();
			await().atMost(WAIT).until(() -> !election.isLeader());
			int before = this.target.emitted.get();
			await().atMost(WAIT).until(() -> this.target.emitted.get() > before + 2);
			assertThat(this.target.upstreamCancelled.get()).isFalse();
		}
		finally {
			subscription.dispose();
		}
	}

	@Test
	void shutdownWaitsForTheWorkBeforeReleasingTheLease() throws Exception {
		assertShutdownWaitsFor(() -> this.jobs.untilAllowed().toFuture());
	}

	@Test
	void shutdownWaitsForTheFutureAMethodReturnedBeforeReleasingTheLease() throws Exception {
		assertShutdownWaitsFor(this.jobs::inTheBackground);
	}

	/**
	 * Starts the work as leader, closes the engine, and sees the lease kept until it
	 * ends.
	 */
	private void assertShutdownWaitsFor(Supplier<CompletableFuture<String>> start) throws Exception {
		LeaderElection election = startLeading();
		CompletableFuture<String> work = start.get();
		assertThat(this.target.started.await(20, TimeUnit.SECONDS)).isTrue();
		CompletableFuture<Void> closing = CompletableFuture.runAsync(this.engine::close);
		await().atMost(WAIT).until(() -> !election.isLeader());
		Thread.sleep(200);
		assertThat(closing).isNotDone();
		assertThat(holder()).contains("node-1");
		this.target.mayEnd.countDown();
		assertThat(work.get(20, TimeUnit.SECONDS)).isEqualTo("done");
		closing.get(20, TimeUnit.SECONDS);
		assertThat(holder()).isEmpty();
	}

	@Test
	void aRevocationCancelsTheFutureOfAMethodThatAsksForInterruption() throws Exception {
		LeaderElection election = startLeading();
		CompletableFuture<String> work = this.jobs.inTheBackgroundInterruptible();
		assertThat(this.target.started.await(20, TimeUnit.SECONDS)).isTrue();
		election.yieldLeadership();
		await().atMost(WAIT).until(work::isDone);
		assertThat(work).isCancelled();
	}

	@Test
	void theWorkSeesItsLeadershipInItsContext() {
		startLeading();
		Leadership leadership = this.jobs.leadershipInContext().block(WAIT);
		assertThat(leadership).isNotNull();
		assertThat(leadership.group()).isEqualTo("default");
		assertThat(leadership.term()).isEqualTo(1);
	}

	private LeaderElection startLeading() {
		LeaderElection election = this.engine.join("default");
		this.engine.addListener(this.interceptor);
		this.engine.start();
		await().atMost(WAIT).until(election::isLeader);
		return election;
	}

	private Optional<String> holder() {
		return this.store.read("default", Duration.ofSeconds(1)).map(Lease::holder);
	}

	private ReactiveJobs proxy(ReactiveJobs target) {
		ProxyFactory factory = new ProxyFactory(target);
		factory.setProxyTargetClass(true);
		factory.addAdvisor(new OnlyOnLeaderAdvisor(this.interceptor));
		return (ReactiveJobs) factory.getProxy();
	}

	public static class ReactiveJobs {

		final AtomicInteger calls = new AtomicInteger();

		final AtomicInteger emitted = new AtomicInteger();

		final AtomicReference<Boolean> upstreamCancelled = new AtomicReference<>(false);

		final CountDownLatch started = new CountDownLatch(1);

		final CountDownLatch mayEnd = new CountDownLatch(1);

		@OnlyOnLeader
		public Mono<String> once() {
			this.calls.incrementAndGet();
			return Mono.deferContextual((context) -> Mono.just("ran in term " + context.get(Leadership.class).term()));
		}

		@OnlyOnLeader(interruptOnRevoke = true)
		public Flux<Long> endlessInterruptible() {
			return endlessWork();
		}

		@OnlyOnLeader
		public Flux<Long> endlessUninterruptible() {
			return endlessWork();
		}

		private Flux<Long> endlessWork() {
			return Flux.interval(Duration.ofMillis(20))
				.doOnNext((tick) -> this.emitted.incrementAndGet())
				.doOnCancel(() -> this.upstreamCancelled.set(true));
		}

		@OnlyOnLeader
		public Mono<String> untilAllowed() {
			return Mono.fromCallable(() -> {
				this.started.countDown();
				this.mayEnd.await();
				return "done";
			}).subscribeOn(reactor.core.scheduler.Schedulers.boundedElastic());
		}

		@OnlyOnLeader
		public CompletableFuture<String> inTheBackground() {
			return CompletableFuture.supplyAsync(this::startAndAwaitEnd);
		}

		@OnlyOnLeader(interruptOnRevoke = true)
		public CompletableFuture<String> inTheBackgroundInterruptible() {
			return CompletableFuture.supplyAsync(this::startAndAwaitEnd);
		}

		private String startAndAwaitEnd() {
			this.started.countDown();
			try {
				this.mayEnd.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return "done";
		}

		@OnlyOnLeader
		public Mono<Leadership> leadershipInContext() {
			return Mono.deferContextual((context) -> Mono.just(context.get(Leadership.class)));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	static class ScheduledConfiguration {

		@Bean
		InMemoryLeaseStore leaseStore() {
			InMemoryLeaseStore store = new InMemoryLeaseStore();
			store.tryAcquire("reports", "other", Duration.ofHours(1), Duration.ofSeconds(1));
			return store;
		}

		@Bean
		ScheduledReactiveJobs scheduledReactiveJobs() {
			return new ScheduledReactiveJobs();
		}

	}

	public static class ScheduledReactiveJobs {

		final AtomicInteger ticks = new AtomicInteger();

		final AtomicInteger leaderCalls = new AtomicInteger();

		final AtomicInteger leaderRuns = new AtomicInteger();

		final AtomicInteger followerCalls = new AtomicInteger();

		final AtomicInteger followerRuns = new AtomicInteger();

		int ticks() {
			return this.ticks.get();
		}

		int leaderCalls() {
			return this.leaderCalls.get();
		}

		int leaderRuns() {
			return this.leaderRuns.get();
		}

		int followerCalls() {
			return this.followerCalls.get();
		}

		int followerRuns() {
			return this.followerRuns.get();
		}

		@Scheduled(fixedDelay = 20)
		public Mono<Void> tick() {
			return Mono.fromRunnable(this.ticks::incrementAndGet);
		}

		@OnlyOnLeader
		@Scheduled(fixedDelay = 20)
		public Mono<Void> onLeader() {
			this.leaderCalls.incrementAndGet();
			return Mono.fromRunnable(this.leaderRuns::incrementAndGet);
		}

		@OnlyOnLeader(group = "reports")
		@Scheduled(fixedDelay = 20)
		public Flux<Integer> onFollower() {
			this.followerCalls.incrementAndGet();
			return Flux.just(1).doOnNext((one) -> this.followerRuns.incrementAndGet());
		}

	}

}
