package io.github.leaderelection.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.sql.DataSource;

import io.github.leaderelection.testing.ApplicationReady;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.OnlyOnLeader;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.jdbc.JdbcLeaseStore;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link LeaderElectionLifecycle}: the election starts when the application is
 * ready and stops, waiting for leader-only work, before the scheduler, the other
 * lifecycle beans and the DataSource shut down.
 */
class LeaderElectionLifecycleTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(LeaderElectionAutoConfiguration.class, TaskSchedulingAutoConfiguration.class))
		.withUserConfiguration(TimelineConfiguration.class);

	@Test
	void startsElectionOnlyWhenApplicationIsReady() {
		this.contextRunner.withUserConfiguration(RecordingStoreConfiguration.class).run((context) -> {
			LeaderElectionEngine engine = context.getBean(LeaderElectionEngine.class);
			LeaderElection election = context.getBean(LeaderElection.class);
			Thread.sleep(200);
			assertThat(engine.isRunning()).isFalse();
			assertThat(election.isLeader()).isFalse();
			ApplicationReady.publish(context);
			assertThat(engine.isRunning()).isTrue();
			await().atMost(TIMEOUT).until(election::isLeader);
		});
	}

	@Test
	void ignoresReadyEventOfAnotherContext() {
		this.contextRunner.withUserConfiguration(RecordingStoreConfiguration.class).run((context) -> {
			try (GenericApplicationContext other = new GenericApplicationContext()) {
				context.publishEvent(
						new ApplicationReadyEvent(new SpringApplication(), new String[0], other, Duration.ZERO));
			}
			assertThat(context.getBean(LeaderElectionEngine.class).isRunning()).isFalse();
		});
	}

	@Test
	void waitsForRunningLeaderOnlyMethodBeforeReleasingLeaseAndBeforeSchedulerStops() {
		this.contextRunner.withUserConfiguration(RecordingStoreConfiguration.class, SlowJobConfiguration.class)
			.run((context) -> {
				ApplicationReady.publish(context);
				SlowJob job = context.getBean(SlowJob.class);
				assertThat(job.awaitStarted()).isTrue();
				String candidateId = context.getBean(LeaderElection.class).candidateId();
				LeaseStore store = context.getBean(LeaseStore.class);
				Timeline timeline = context.getBean(Timeline.class);
				ThreadPoolTaskScheduler scheduler = context.getBean(ThreadPoolTaskScheduler.class);

				Thread closer = new Thread(context::close, "closer");
				closer.start();
				await().atMost(TIMEOUT).until(() -> !context.getBean(LeaderElection.class).isLeader());
				Thread.sleep(300);
				// Closing has begun and waits for the job: the lease is still held and
				// nothing else has stopped.
				assertThat(closer.isAlive()).isTrue();
				assertThat(holder(store)).contains(candidateId);
				assertThat(scheduler.getScheduledExecutor().isShutdown()).isFalse();
				assertThat(timeline.events()).isEmpty();

				job.finish();
				closer.join(TIMEOUT.toMillis());
				assertThat(closer.isAlive()).isFalse();
				assertThat(timeline.events()).startsWith("job finished", "lease released", "lifecycle stopped");
				assertThat(job.interrupted()).isFalse();
				assertThat(holder(store)).isEmpty();
			});
	}

	@Test
	void stopsWaitingForLeaderOnlyMethodAfterShutdownTimeout() {
		this.contextRunner.withUserConfiguration(RecordingStoreConfiguration.class, SlowJobConfiguration.class)
			.withPropertyValues("leader-election.shutdown-timeout=500ms")
			.run((context) -> {
				ApplicationReady.publish(context);
				SlowJob job = context.getBean(SlowJob.class);
				assertThat(job.awaitStarted()).isTrue();
				LeaseStore store = context.getBean(LeaseStore.class);
				Timeline timeline = context.getBean(Timeline.class);
				Thread closer = new Thread(context::close, "closer");
				closer.start();
				// The scheduler's own stop then waits for the job, up to the lifecycle
				// phase timeout.
				await().atMost(Duration.ofSeconds(5)).until(() -> timeline.events().contains("lease released"));
				assertThat(timeline.events()).startsWith("lease released");
				assertThat(holder(store)).isEmpty();
				job.finish();
				closer.join(TIMEOUT.toMillis());
			});
	}

	@Test
	void interruptsRunningLeaderOnlyMethodOnShutdownWhenAsked() {
		this.contextRunner.withUserConfiguration(RecordingStoreConfiguration.class, InterruptibleJobConfiguration.class)
			.run((context) -> {
				ApplicationReady.publish(context);
				SlowJob job = context.getBean(SlowJob.class);
				assertThat(job.awaitStarted()).isTrue();
				Timeline timeline = context.getBean(Timeline.class);
				long start = System.nanoTime();
				context.close();
				assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
				assertThat(job.interrupted()).isTrue();
				assertThat(timeline.events()).startsWith("job finished", "lease released");
			});
	}

	@Test
	void keepsLeaseOnShutdownWhenReleaseOnShutdownIsOff() {
		this.contextRunner.withUserConfiguration(RecordingStoreConfiguration.class)
			.withPropertyValues("leader-election.release-on-shutdown=false")
			.run((context) -> {
				ApplicationReady.publish(context);
				LeaderElection election = context.getBean(LeaderElection.class);
				await().atMost(TIMEOUT).until(election::isLeader);
				LeaseStore store = context.getBean(LeaseStore.class);
				Timeline timeline = context.getBean(Timeline.class);
				context.close();
				assertThat(election.isLeader()).isFalse();
				assertThat(holder(store)).contains(election.candidateId());
				assertThat(timeline.events()).doesNotContain("lease released");
			});
	}

	@Test
	void releasesLeaseThroughDataSourceBeforeItIsClosed() {
		String url = "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
		this.contextRunner.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=" + url, "leader-election.backend=jdbc",
					"leader-election.jdbc.allow-in-memory-database=true")
			.run((context) -> {
				ApplicationReady.publish(context);
				LeaderElection election = context.getBean(LeaderElection.class);
				await().atMost(TIMEOUT).until(election::isLeader);
				JdbcLeaseStore afterClose = new JdbcLeaseStore(h2(url));
				assertThat(holder(afterClose)).contains(election.candidateId());
				long term = election.leadership().orElseThrow().term();
				context.close();
				assertThat(holder(afterClose)).isEmpty();
				assertThat(afterClose.read("default", Duration.ofSeconds(5))).map(Lease::term).contains(term);
			});
	}

	private static Optional<String> holder(LeaseStore store) {
		return store.read("default", Duration.ofSeconds(5)).map(Lease::holder);
	}

	private static DataSource h2(String url) {
		JdbcDataSource dataSource = new JdbcDataSource();
		dataSource.setURL(url);
		dataSource.setUser("sa"); // Boot's user for embedded databases
		return dataSource;
	}

	@Configuration(proxyBeanMethods = false)
	static class TimelineConfiguration {

		@Bean
		Timeline timeline() {
			return new Timeline();
		}

		@Bean
		SmartLifecycle lastStartedLifecycle(Timeline timeline) {
			return new TimelineLifecycle(timeline);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class RecordingStoreConfiguration {

		@Bean
		LeaseStore leaseStore(Timeline timeline) {
			return new RecordingLeaseStore(timeline);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	static class SlowJobConfiguration {

		/**
		 * A scheduler registered before the auto-configured beans, so its listener of the
		 * context closing comes first unless the election's listener is ordered before
		 * it.
		 */
		@Bean
		ThreadPoolTaskScheduler taskScheduler() {
			return new ThreadPoolTaskScheduler();
		}

		@Bean
		SlowJob slowJob(Timeline timeline) {
			return new SlowJob(timeline);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	static class InterruptibleJobConfiguration {

		@Bean
		SlowJob slowJob(Timeline timeline) {
			return new InterruptibleJob(timeline);
		}

	}

	static class Timeline {

		private final List<String> events = new CopyOnWriteArrayList<>();

		void record(String event) {
			this.events.add(event);
		}

		List<String> events() {
			return this.events;
		}

	}

	/**
	 * The first run blocks until told to finish (or interrupted), and records when it
	 * ends.
	 */
	public static class SlowJob {

		private final Timeline timeline;

		private final AtomicBoolean first = new AtomicBoolean(true);

		private final CountDownLatch started = new CountDownLatch(1);

		private final CountDownLatch finish = new CountDownLatch(1);

		private volatile boolean interrupted;

		SlowJob(Timeline timeline) {
			this.timeline = timeline;
		}

		@OnlyOnLeader
		@Scheduled(fixedDelay = 50)
		public void run() {
			if (this.first.compareAndSet(true, false)) {
				this.started.countDown();
				try {
					this.finish.await(30, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					this.interrupted = true;
				}
				this.timeline.record("job finished");
			}
		}

		boolean awaitStarted() throws InterruptedException {
			return this.started.await(20, TimeUnit.SECONDS);
		}

		void finish() {
			this.finish.countDown();
		}

		boolean interrupted() {
			return this.interrupted;
		}

	}

	public static class InterruptibleJob extends SlowJob {

		InterruptibleJob(Timeline timeline) {
			super(timeline);
		}

		@Override
		@OnlyOnLeader(interruptOnRevoke = true)
		@Scheduled(fixedDelay = 50)
		public void run() {
			super.run();
		}

	}

	/** Stops among the first lifecycle beans, in the scheduler's phase. */
	static class TimelineLifecycle implements SmartLifecycle {

		private final Timeline timeline;

		private volatile boolean running;

		TimelineLifecycle(Timeline timeline) {
			this.timeline = timeline;
		}

		@Override
		public void start() {
			this.running = true;
		}

		@Override
		public void stop() {
			this.running = false;
			this.timeline.record("lifecycle stopped");
		}

		@Override
		public boolean isRunning() {
			return this.running;
		}

	}

	static class RecordingLeaseStore extends InMemoryLeaseStore {

		private final Timeline timeline;

		RecordingLeaseStore(Timeline timeline) {
			this.timeline = timeline;
		}

		@Override
		public void release(Lease lease, Duration timeout) {
			super.release(lease, timeout);
			this.timeline.record("lease released");
		}

	}

}
