package io.github.leaderelection.aop;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.LeadershipContext;
import io.github.leaderelection.OnlyOnLeader;
import io.github.leaderelection.testing.ApplicationReady;
import io.github.leaderelection.autoconfigure.DisabledLeaderElectionAutoConfiguration;
import io.github.leaderelection.autoconfigure.LeaderElectionAutoConfiguration;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import org.aspectj.weaver.Advice;
import org.junit.jupiter.api.Test;

import org.springframework.aop.aspectj.annotation.AnnotationAwareAspectJAutoProxyCreator;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.framework.autoproxy.InfrastructureAdvisorAutoProxyCreator;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link OnlyOnLeaderAdvisor} and {@link OnlyOnLeaderInterceptor}, applied by
 * the auto-configuration. This instance leads the application's group ({@code default})
 * and is a follower in {@code reports}, whose lease another candidate holds.
 */
class OnlyOnLeaderAdvisorTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class,
				DisabledLeaderElectionAutoConfiguration.class))
		.withUserConfiguration(StoreConfiguration.class, JobsConfiguration.class);

	@Test
	void runsMethodsOnLeaderAndSkipsThemOnFollowerWithAspectJAutoProxying() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class)).run((context) -> {
			assertThat(context.getBean(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME))
				.isInstanceOf(AnnotationAwareAspectJAutoProxyCreator.class);
			assertGuarded(context);
		});
	}

	@Test
	void runsMethodsOnLeaderAndSkipsThemOnFollowerWithoutAspectJ() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader(Advice.class))
			.run((context) -> {
				assertThat(context.getBean(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME).getClass())
					.isEqualTo(InfrastructureAdvisorAutoProxyCreator.class);
				assertGuarded(context);
			});
	}

	@Test
	void runsMethodsOnLeaderAndSkipsThemOnFollowerWithoutAopAutoConfiguration() {
		this.contextRunner.run((context) -> {
			assertThat(context.getBean(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME).getClass())
				.isEqualTo(InfrastructureAdvisorAutoProxyCreator.class);
			assertGuarded(context);
		});
	}

	@Test
	void proxiesClassesSoThatBeansCanBeInjectedByClass() {
		this.contextRunner.run((context) -> {
			Jobs jobs = context.getBean(Jobs.class);
			assertThat(AopUtils.isCglibProxy(jobs)).isTrue();
		});
	}

	@Test
	void skipsEveryCallBeforeTheApplicationIsReady() {
		this.contextRunner.run((context) -> {
			Jobs jobs = context.getBean(Jobs.class);
			assertThat(jobs.text()).isNull();
			assertThat(jobs.runs()).isZero();
		});
	}

	@Test
	void returnsEmptyOrDefaultValuesFromSkippedCalls() {
		this.contextRunner.run((context) -> {
			ApplicationReady.publish(context);
			Reports reports = context.getBean(Reports.class);
			reports.run();
			assertThat(reports.text()).isNull();
			assertThat(reports.optional()).isEmpty();
			assertThat(reports.optionalInt()).isEmpty();
			assertThat(reports.optionalLong()).isEmpty();
			assertThat(reports.optionalDouble()).isEmpty();
			assertThat(reports.flag()).isFalse();
			assertThat(reports.character()).isEqualTo('\0');
			assertThat(reports.oneByte()).isZero();
			assertThat(reports.oneShort()).isZero();
			assertThat(reports.number()).isZero();
			assertThat(reports.longNumber()).isZero();
			assertThat(reports.floatNumber()).isZero();
			assertThat(reports.doubleNumber()).isZero();
			assertThat(reports.runs()).isZero();
		});
	}

	@Test
	void returnsMethodResultsOnLeader() {
		this.contextRunner.run((context) -> {
			ApplicationReady.publish(context);
			awaitLeader(context, "default");
			Jobs jobs = context.getBean(Jobs.class);
			assertThat(jobs.run()).isNull();
			assertThat(jobs.runs()).isEqualTo(1);
			assertThat(jobs.text()).isEqualTo("ran");
			assertThat(jobs.optional()).contains("ran");
			assertThat(jobs.number()).isEqualTo(42);
			assertThat(jobs.flag()).isTrue();
		});
	}

	@Test
	void appliesAnnotationOnTypeToEveryPublicMethod() {
		this.contextRunner.run((context) -> {
			ApplicationReady.publish(context);
			awaitLeader(context, "default");
			Reports reports = context.getBean(Reports.class);
			assertThat(reports.text()).isNull();
			assertThat(reports.toString()).isEqualTo("Reports");
			assertThat(reports.reportsOnDefaultGroup()).isEqualTo("ran");
		});
	}

	@Test
	void joinsGroupsNamedInAnnotationsAtStartup() {
		this.contextRunner.run((context) -> {
			LeaderElectionRegistry registry = context.getBean(LeaderElectionRegistry.class);
			assertThat(registry.elections()).extracting(LeaderElection::group)
				.containsExactlyInAnyOrder("default", "reports", "billing");
		});
	}

	@Test
	void exposesLeadershipInsideGuardedMethods() {
		this.contextRunner.run((context) -> {
			ApplicationReady.publish(context);
			LeaderElection election = awaitLeader(context, "default");
			Jobs jobs = context.getBean(Jobs.class);
			Optional<Leadership> inside = jobs.leadership();
			assertThat(inside).isPresent();
			assertThat(inside.get().group()).isEqualTo("default");
			assertThat(inside.get().term()).isEqualTo(election.leadership().orElseThrow().term());
			assertThat(inside.get().isValid()).isTrue();
			assertThat(LeadershipContext.current()).isEmpty();
			assertThat(jobs.unguardedLeadership()).isEmpty();
		});
	}

	@Test
	void runsAsyncMethodsOnTheExecutorThreadUnderTheLeadership() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(TaskExecutionAutoConfiguration.class))
			.withUserConfiguration(AsyncConfiguration.class)
			.run((context) -> {
				ApplicationReady.publish(context);
				awaitLeader(context, "default");
				AsyncJobs jobs = context.getBean(AsyncJobs.class);
				String result = jobs.onDefault().get(20, TimeUnit.SECONDS);
				assertThat(result).startsWith("default:").doesNotContain(Thread.currentThread().getName());
				assertThat(jobs.onReports().get(20, TimeUnit.SECONDS)).isNull();
				assertThat(jobs.runs()).isEqualTo(1);
			});
	}

	@Test
	void runsScheduledMethodsOnlyOnLeaderAndOnlyOnceTheApplicationIsReady() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(TaskSchedulingAutoConfiguration.class))
			.withUserConfiguration(ScheduledConfiguration.class)
			.run((context) -> {
				ScheduledJobs jobs = context.getBean(ScheduledJobs.class);
				await().atMost(TIMEOUT).until(() -> jobs.calls() >= 3);
				assertThat(jobs.leaderRuns()).isZero();
				ApplicationReady.publish(context);
				await().atMost(TIMEOUT).until(() -> jobs.leaderRuns() >= 3);
				assertThat(jobs.followerRuns()).isZero();
			});
	}

	@Test
	void interruptsMethodWhenLeadershipIsRevokedIfAsked() {
		this.contextRunner.run((context) -> {
			ApplicationReady.publish(context);
			LeaderElection election = awaitLeader(context, "default");
			Jobs jobs = context.getBean(Jobs.class);
			ExecutorService executor = Executors.newSingleThreadExecutor();
			try {
				CompletableFuture<Boolean> interrupted = CompletableFuture.supplyAsync(jobs::awaitInterrupt, executor);
				CompletableFuture<Boolean> flagAfterwards = interrupted
					.thenApplyAsync((ignored) -> Thread.currentThread().isInterrupted(), executor);
				assertThat(jobs.awaitStarted()).isTrue();
				election.yieldLeadership();
				assertThat(interrupted.get(20, TimeUnit.SECONDS)).isTrue();
				assertThat(flagAfterwards.get(20, TimeUnit.SECONDS)).isFalse();
			}
			finally {
				executor.shutdownNow();
			}
		});
	}

	@Test
	void doesNotInterruptMethodWhenLeadershipIsRevokedByDefault() {
		this.contextRunner.run((context) -> {
			ApplicationReady.publish(context);
			LeaderElection election = awaitLeader(context, "default");
			Jobs jobs = context.getBean(Jobs.class);
			CompletableFuture<Boolean> valid = CompletableFuture.supplyAsync(jobs::awaitRelease);
			assertThat(jobs.awaitStarted()).isTrue();
			election.yieldLeadership();
			Thread.sleep(300);
			assertThat(valid).isNotDone();
			jobs.release();
			assertThat(valid.get(20, TimeUnit.SECONDS)).isFalse();
			assertThat(jobs.interrupted()).isFalse();
		});
	}

	@Test
	void failsAtStartupWhenAnnotationNamesInvalidGroup() {
		this.contextRunner.withBean(BlankGroup.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause().hasMessage("group must not be blank");
			assertThat(context.getStartupFailure())
				.hasMessageContaining("Invalid group ' ' in @OnlyOnLeader on " + BlankGroup.class.getName() + "#run()");
		});
	}

	@Test
	void runsMethodsOnEveryInstanceUnelectedWhenLeaderElectionIsDisabled() {
		this.contextRunner.withPropertyValues("leader-election.enabled=false").run((context) -> {
			Jobs jobs = context.getBean(Jobs.class);
			assertThat(jobs.reports()).isEqualTo("ran");
			assertThat(jobs.text()).isEqualTo("ran");
			Leadership inside = jobs.leadership().orElseThrow();
			assertThat(inside.group()).isEqualTo("default");
			assertThat(inside.term()).isZero();
			assertThat(context.getBean(Reports.class).text()).isEqualTo("ran");
		});
	}

	@Test
	void doesNotCheckCallsFromTheSameBean() {
		this.contextRunner.withBean(SelfCalling.class).run((context) -> {
			SelfCalling bean = context.getBean(SelfCalling.class);
			assertThat(bean.reports()).isNull();
			assertThat(bean.reportsThroughThis()).isEqualTo("ran");
		});
	}

	@Test
	void checksCallsFromTheSameBeanThroughItsProxy() {
		this.contextRunner.withBean(SelfInjected.class).run((context) -> {
			SelfInjected bean = context.getBean(SelfInjected.class);
			assertThat(bean.reportsThroughSelf()).isNull();
		});
	}

	private static void assertGuarded(AssertableApplicationContext context) {
		assertThat(context).hasNotFailed();
		ApplicationReady.publish(context);
		awaitLeader(context, "default");
		Jobs jobs = context.getBean(Jobs.class);
		assertThat(jobs.text()).isEqualTo("ran");
		assertThat(jobs.reports()).isNull();
		assertThat(context.getBean(Reports.class).text()).isNull();
	}

	private static LeaderElection awaitLeader(AssertableApplicationContext context, String group) {
		LeaderElection election = context.getBean(LeaderElectionRegistry.class).find(group).orElseThrow();
		await().atMost(TIMEOUT).until(election::isLeader);
		return election;
	}

	@Configuration(proxyBeanMethods = false)
	static class StoreConfiguration {

		@Bean
		InMemoryLeaseStore leaseStore() {
			InMemoryLeaseStore store = new InMemoryLeaseStore();
			store.tryAcquire("reports", "other", Duration.ofHours(1), Duration.ofSeconds(1));
			return store;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class JobsConfiguration {

		@Bean
		Jobs jobs() {
			return new Jobs();
		}

		@Bean
		Reports reports() {
			return new Reports();
		}

		@Bean
		Billing billing() {
			return new Billing();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAsync
	static class AsyncConfiguration {

		@Bean
		AsyncJobs asyncJobs() {
			return new AsyncJobs();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	static class ScheduledConfiguration {

		@Bean
		ScheduledJobs scheduledJobs() {
			return new ScheduledJobs();
		}

	}

	public static class Jobs {

		private final AtomicInteger runs = new AtomicInteger();

		private final CountDownLatch started = new CountDownLatch(1);

		private final CountDownLatch release = new CountDownLatch(1);

		private volatile boolean interrupted;

		int runs() {
			return this.runs.get();
		}

		boolean awaitStarted() throws InterruptedException {
			return this.started.await(20, TimeUnit.SECONDS);
		}

		void release() {
			this.release.countDown();
		}

		boolean interrupted() {
			return this.interrupted;
		}

		@OnlyOnLeader
		public Void run() {
			this.runs.incrementAndGet();
			return null;
		}

		@OnlyOnLeader
		public String text() {
			return "ran";
		}

		@OnlyOnLeader
		public Optional<String> optional() {
			return Optional.of("ran");
		}

		@OnlyOnLeader
		public int number() {
			return 42;
		}

		@OnlyOnLeader
		public boolean flag() {
			return true;
		}

		@OnlyOnLeader(group = "reports")
		public String reports() {
			return "ran";
		}

		@OnlyOnLeader
		public Optional<Leadership> leadership() {
			return LeadershipContext.current();
		}

		public Optional<Leadership> unguardedLeadership() {
			return LeadershipContext.current();
		}

		/** Busy-waits until interrupted and returns with the interrupt flag still set. */
		@OnlyOnLeader(interruptOnRevoke = true)
		public boolean awaitInterrupt() {
			this.started.countDown();
			long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
			while (!Thread.currentThread().isInterrupted() && System.nanoTime() < deadline) {
				Thread.onSpinWait();
			}
			return Thread.currentThread().isInterrupted();
		}

		/**
		 * Runs past its leadership until released; answers whether the leadership is
		 * still valid.
		 */
		@OnlyOnLeader
		public boolean awaitRelease() {
			this.started.countDown();
			try {
				this.release.await(20, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				this.interrupted = true;
			}
			return LeadershipContext.current().orElseThrow().isValid();
		}

	}

	@OnlyOnLeader(group = "reports")
	public static class Reports {

		private final AtomicInteger runs = new AtomicInteger();

		int runs() {
			return this.runs.get();
		}

		public void run() {
			this.runs.incrementAndGet();
		}

		public String text() {
			this.runs.incrementAndGet();
			return "ran";
		}

		public Optional<String> optional() {
			this.runs.incrementAndGet();
			return Optional.of("ran");
		}

		public OptionalInt optionalInt() {
			this.runs.incrementAndGet();
			return OptionalInt.of(1);
		}

		public OptionalLong optionalLong() {
			this.runs.incrementAndGet();
			return OptionalLong.of(1);
		}

		public OptionalDouble optionalDouble() {
			this.runs.incrementAndGet();
			return OptionalDouble.of(1);
		}

		public boolean flag() {
			this.runs.incrementAndGet();
			return true;
		}

		public char character() {
			this.runs.incrementAndGet();
			return 'x';
		}

		public byte oneByte() {
			this.runs.incrementAndGet();
			return 1;
		}

		public short oneShort() {
			this.runs.incrementAndGet();
			return 1;
		}

		public int number() {
			this.runs.incrementAndGet();
			return 1;
		}

		public long longNumber() {
			this.runs.incrementAndGet();
			return 1;
		}

		public float floatNumber() {
			this.runs.incrementAndGet();
			return 1;
		}

		public double doubleNumber() {
			this.runs.incrementAndGet();
			return 1;
		}

		@OnlyOnLeader
		public String reportsOnDefaultGroup() {
			return "ran";
		}

		@Override
		public String toString() {
			return "Reports";
		}

	}

	public static class Billing {

		@OnlyOnLeader(group = "billing")
		public void bill() {
		}

	}

	public static class SelfCalling {

		@OnlyOnLeader(group = "reports")
		public String reports() {
			return "ran";
		}

		public String reportsThroughThis() {
			return reports();
		}

	}

	public static class SelfInjected {

		private final SelfInjected self;

		public SelfInjected(@Lazy SelfInjected self) {
			this.self = self;
		}

		@OnlyOnLeader(group = "reports")
		public String reports() {
			return "ran";
		}

		public String reportsThroughSelf() {
			return this.self.reports();
		}

	}

	public static class BlankGroup {

		@OnlyOnLeader(group = " ")
		public void run() {
		}

	}

	public static class AsyncJobs {

		private final AtomicInteger runs = new AtomicInteger();

		int runs() {
			return this.runs.get();
		}

		@Async
		@OnlyOnLeader
		public CompletableFuture<String> onDefault() {
			this.runs.incrementAndGet();
			Leadership leadership = LeadershipContext.current().orElseThrow();
			return CompletableFuture.completedFuture(leadership.group() + ":" + Thread.currentThread().getName());
		}

		@Async
		@OnlyOnLeader(group = "reports")
		public CompletableFuture<String> onReports() {
			this.runs.incrementAndGet();
			return CompletableFuture.completedFuture("ran");
		}

	}

	public static class ScheduledJobs {

		private final AtomicInteger calls = new AtomicInteger();

		private final AtomicInteger leaderRuns = new AtomicInteger();

		private final AtomicInteger followerRuns = new AtomicInteger();

		int calls() {
			return this.calls.get();
		}

		int leaderRuns() {
			return this.leaderRuns.get();
		}

		int followerRuns() {
			return this.followerRuns.get();
		}

		@Scheduled(fixedDelay = 20)
		public void tick() {
			this.calls.incrementAndGet();
		}

		@OnlyOnLeader
		@Scheduled(fixedDelay = 20)
		public void onLeader() {
			this.leaderRuns.incrementAndGet();
		}

		@OnlyOnLeader(group = "reports")
		@Scheduled(fixedDelay = 20)
		public void onFollower() {
			this.followerRuns.incrementAndGet();
		}

	}

}
