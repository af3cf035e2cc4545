package io.github.leaderelection.scheduling;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.LeadershipContext;
import io.github.leaderelection.OnlyOnLeader;
import io.github.leaderelection.OnlyOnLeader.MissedTickPolicy;
import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.autoconfigure.LeaderElectionAutoConfiguration;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.testing.ApplicationReady;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.util.StringUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Scheduled {@code @OnlyOnLeader} methods claim each tick in the store before they run: a
 * tick runs once across the instances and across a hand-over, a tick already claimed is
 * not run, and the next leader catches up the ticks missed while nobody led.
 */
@ExtendWith(OutputCaptureExtension.class)
class ScheduledLeaderOnlyJobsTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final String GROUP = "reports";

	private final InMemoryLeaseStore store = new InMemoryLeaseStore();

	private final Runs runs = new Runs();

	private final ObservationRegistry observations = ObservationRegistry.create();

	{
		this.observations.observationConfig().observationHandler(this.runs);
	}

	private ApplicationContextRunner runner(Class<?> jobs) {
		return new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(LeaderElectionAutoConfiguration.class, TaskSchedulingAutoConfiguration.class))
			.withUserConfiguration(Scheduling.class)
			.withBean(StringUtils.uncapitalize(jobs.getSimpleName()), jobs)
			.withBean(InMemoryLeaseStore.class, () -> this.store)
			.withBean(ObservationRegistry.class, () -> this.observations)
			.withPropertyValues("leader-election.group=" + GROUP, "leader-election.lease-duration=3s",
					"leader-election.renew-deadline=2s", "leader-election.retry-period=500ms",
					"spring.task.scheduling.pool.size=2");
	}

	@Test
	void eachTickRunsOnceAcrossTwoInstancesAndAHandOver() {
		runner(EverySecond.class).run((first) -> runner(EverySecond.class).run((second) -> {
			ApplicationReady.publish(first);
			ApplicationReady.publish(second);
			await().atMost(WAIT).until(() -> this.runs.ticks().size() >= 3);
			LeaderElection leader = leaderOf(first, second);
			leader.yieldLeadership();
			int before = this.runs.ticks().size();
			await().atMost(WAIT).until(() -> this.runs.ticks().size() >= before + 3);
			List<Instant> ticks = this.runs.ticks();
			assertThat(ticks).as("ticks run").doesNotHaveDuplicates();
			assertThat(ticks).allSatisfy((tick) -> assertThat(tick.getNano()).isZero());
			int calls = first.getBean(EverySecond.class).calls() + second.getBean(EverySecond.class).calls();
			assertThat(calls).as("method calls, each a claimed tick").isEqualTo(this.runs.started.get());
			assertThat(this.runs.terms()).as("terms of the runs").hasSizeGreaterThanOrEqualTo(2);
		}));
	}

	@Test
	void aTickAlreadyClaimedIsNotRunAgain() {
		Instant claimedAhead = Instant.now().plusSeconds(8).truncatedTo(ChronoUnit.SECONDS);
		seed("everySecond.tick", claimedAhead);
		runner(EverySecond.class).run((context) -> {
			ApplicationReady.publish(context);
			await().atMost(WAIT).until(() -> !this.runs.ticks().isEmpty());
			assertThat(this.runs.ticks()).allSatisfy((tick) -> assertThat(tick).isAfter(claimedAhead));
			JobStats stats = job(context).stats();
			assertThat(stats.skippedAsAlreadyRun()).as("ticks up to the claimed one, refused").isPositive();
			assertThat(stats.claims()).isGreaterThan(stats.skippedAsAlreadyRun());
		});
	}

	@Test
	void aLastRunClaimedByAClockFarAheadIsWarnedOfOnce(CapturedOutput output) {
		Instant ahead = Instant.now().plus(Duration.ofHours(5)).truncatedTo(ChronoUnit.SECONDS);
		seed("everySecond.tick", ahead);
		runner(EverySecond.class).run((context) -> {
			ApplicationReady.publish(context);
			JobStats stats = job(context).stats();
			await().atMost(WAIT).until(() -> stats.skippedAsAlreadyRun() >= 3);
			assertThat(context.getBean(EverySecond.class).calls()).isZero();
			String warning = "its last run, by 'seeder' in term ";
			assertThat(output.getOut()).contains(warning)
				.contains("was for tick " + ahead + ", PT")
				.contains("Keep the instances' clocks in sync (NTP).");
			assertThat(output.getOut().split(Pattern.quote(warning), -1)).as("warnings").hasSize(2);
		});
	}

	@Test
	void theNextLeaderRunsTheTicksMissedOnceWhenItTakesOver() {
		Instant lastRun = Instant.parse("2024-06-01T00:00:00Z");
		seed("yearly.tick", lastRun);
		runner(Yearly.class).run((context) -> {
			ApplicationReady.publish(context);
			await().atMost(WAIT).until(() -> context.getBean(Yearly.class).calls() == 1);
			ScheduledJob job = job(context);
			await().atMost(WAIT)
				.until(() -> job.job().lastRun().map(RunRecord::outcome),
						(outcome) -> outcome.equals(Optional.of(RunOutcome.SUCCEEDED)));
			RunRecord run = job.job().lastRun().orElseThrow();
			Instant newestMissed = Instant.parse(Instant.now().atZone(ZoneOffset.UTC).getYear() + "-01-01T00:00:00Z");
			assertThat(Instant.ofEpochMilli(run.tick())).as("the newest tick missed").isEqualTo(newestMissed);
			assertThat(job.stats().caughtUp()).isOne();
			assertThat(this.runs.catchUps.get()).isOne();
			assertThat(job.nextTick()).hasValueSatisfying((next) -> assertThat(next).isAfter(Instant.now()));
		});
	}

	@Test
	void ticksMissedAreCaughtUpBeforeTheFirstTickOfATermEvenWhenTheGrantsEventComesLate() {
		Instant lastRun = Instant.now().minusSeconds(20).truncatedTo(ChronoUnit.SECONDS);
		seed("everySecond.tick", lastRun);
		runner(EverySecond.class).withUserConfiguration(SlowFirstListener.class).run((context) -> {
			ApplicationReady.publish(context);
			SlowFirstListener slow = context.getBean(SlowFirstListener.class);
			await().atMost(WAIT).until(() -> slow.delivered.get() && this.runs.ticks().size() >= 4);
			List<Instant> ticks = this.runs.ticks().stream().sorted().toList();
			assertThat(this.runs.catchUps.get()).as("catch-up runs").isOne();
			assertThat(ticks).as("ticks run").doesNotHaveDuplicates();
			for (int i = 1; i < ticks.size(); i++) {
				assertThat(ticks.get(i)).as("the tick after " + ticks.get(i - 1) + ", none lost between them")
					.isEqualTo(ticks.get(i - 1).plusSeconds(1));
			}
			assertThat(ticks.get(0)).as("the catch-up's tick").isAfter(lastRun);
		});
	}

	@Test
	void ticksMissedAreSkippedWhenTheMethodSaysSoOrTheyAreTooOld() {
		Instant lastRun = Instant.parse("2024-06-01T00:00:00Z");
		seed("skippingJobs.skipping", lastRun);
		seed("skippingJobs.tooOld", lastRun);
		runner(SkippingJobs.class).run((context) -> {
			ApplicationReady.publish(context);
			ScheduledJobs jobs = context.getBean(ScheduledJobs.class);
			await().atMost(WAIT).until(() -> jobs.jobs().stream().allMatch((job) -> job.stats().missedSkipped() == 1));
			assertThat(context.getBean(SkippingJobs.class).calls()).isZero();
			assertThat(jobs.jobs()).allSatisfy((job) -> {
				assertThat(job.job().lastRun()).hasValueSatisfying(
						(run) -> assertThat(run.tick()).as("unchanged").isEqualTo(lastRun.toEpochMilli()));
				assertThat(job.stats().lastSkippedTick()).isNotNull();
			});
		});
	}

	@Test
	void aReactiveMethodsRunIsRecordedWhenItsWorkEnds() {
		runner(ReactiveEverySecond.class).run((context) -> {
			ApplicationReady.publish(context);
			ScheduledJob job = job(context);
			await().atMost(WAIT)
				.until(() -> job.stats().runs(RunOutcome.SUCCEEDED) >= 1 && job.stats().runs(RunOutcome.FAILED) >= 1);
			assertThat(context.getBean(ReactiveEverySecond.class).subscriptions()).isEqualTo(this.runs.started.get());
		});
	}

	@Test
	void aCatchUpAskedOfAFixedDelayMethodFailsStartupNamingIt() {
		runner(CatchUpOnFixedDelay.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("CatchUpOnFixedDelay#poll() asks for missedTicks = RUN_ONCE but is scheduled "
						+ "with a fixed delay");
		});
	}

	@Test
	void aMaximumAgeThatIsNotADurationFailsStartupNamingTheMethod() {
		runner(BadMaxAge.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("missedTickMaxAge \"soon\" of ")
				.hasMessageContaining("BadMaxAge#nightly() is not a positive duration");
		});
	}

	@Test
	void withoutRunRecordsAMethodIsOnlyGated() {
		runner(EverySecond.class).withPropertyValues("leader-election.jobs.run-records=false").run((context) -> {
			assertThat(context).doesNotHaveBean(ScheduledJobs.class);
			ApplicationReady.publish(context);
			await().atMost(WAIT).until(() -> context.getBean(EverySecond.class).calls() >= 2);
			assertThat(this.runs.started.get()).isZero();
			assertThat(this.store.lastRun(GROUP, "everySecond.tick", Duration.ofSeconds(1))).isEmpty();
		});
	}

	private void seed(String job, Instant tick) {
		Lease lease = this.store.tryAcquire(GROUP, "seeder", Duration.ofMinutes(1), Duration.ofSeconds(1))
			.orElseThrow();
		RunRecord run = new RunRecord(GROUP, job, tick.toEpochMilli(), "seeder", lease.term(), tick,
				tick.plusSeconds(1), RunOutcome.SUCCEEDED);
		assertThat(this.store.claimRun(lease, run, Duration.ZERO, Duration.ofSeconds(1))).isTrue();
		this.store.release(lease, Duration.ofSeconds(1));
	}

	private static ScheduledJob job(AssertableApplicationContext context) {
		List<ScheduledJob> jobs = context.getBean(ScheduledJobs.class).jobs();
		assertThat(jobs).hasSize(1);
		return jobs.get(0);
	}

	private static LeaderElection leaderOf(AssertableApplicationContext... contexts) {
		for (AssertableApplicationContext context : contexts) {
			LeaderElection election = context.getBean(LeaderElectionRegistry.class).find(GROUP).orElseThrow();
			if (election.isLeader()) {
				return election;
			}
		}
		throw new AssertionError("No instance leads " + GROUP);
	}

	/** The runs, as their observations say. */
	static final class Runs implements ObservationHandler<Observation.Context> {

		final List<Instant> ticks = new CopyOnWriteArrayList<>();

		final List<String> terms = new CopyOnWriteArrayList<>();

		final AtomicInteger started = new AtomicInteger();

		final AtomicInteger catchUps = new AtomicInteger();

		@Override
		public boolean supportsContext(Observation.Context context) {
			return ScheduledJob.OBSERVATION.equals(context.getName());
		}

		@Override
		public void onStart(Observation.Context context) {
			this.started.incrementAndGet();
			this.ticks.add(Instant.parse(context.getHighCardinalityKeyValue("tick").getValue()));
			this.terms.add(context.getHighCardinalityKeyValue("term").getValue());
			if ("true".equals(context.getLowCardinalityKeyValue("catch-up").getValue())) {
				this.catchUps.incrementAndGet();
			}
		}

		List<Instant> ticks() {
			return List.copyOf(this.ticks);
		}

		List<String> terms() {
			return this.terms.stream().distinct().toList();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	static class Scheduling {

	}

	/**
	 * A listener told before the others, which holds the grant's event back while the
	 * scheduler fires the term's first ticks.
	 */
	@Order(Ordered.HIGHEST_PRECEDENCE)
	static class SlowFirstListener implements LeaderElectionListener {

		final AtomicBoolean delivered = new AtomicBoolean();

		@Override
		public void granted(Leadership leadership) {
			try {
				Thread.sleep(3000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			this.delivered.set(true);
		}

	}

	public static class EverySecond {

		final AtomicInteger calls = new AtomicInteger();

		public int calls() {
			return this.calls.get();
		}

		@OnlyOnLeader
		@Scheduled(cron = "* * * * * *")
		public void tick() {
			assertThat(LeadershipContext.current()).isPresent();
			this.calls.incrementAndGet();
		}

	}

	public static class Yearly {

		final AtomicInteger calls = new AtomicInteger();

		public int calls() {
			return this.calls.get();
		}

		@OnlyOnLeader
		@Scheduled(cron = "0 0 0 1 1 *", zone = "UTC")
		public void tick() {
			this.calls.incrementAndGet();
		}

	}

	public static class SkippingJobs {

		final AtomicInteger calls = new AtomicInteger();

		public int calls() {
			return this.calls.get();
		}

		@OnlyOnLeader(missedTicks = MissedTickPolicy.SKIP)
		@Scheduled(cron = "0 0 0 1 1 *", zone = "UTC")
		public void skipping() {
			this.calls.incrementAndGet();
		}

		@OnlyOnLeader(missedTickMaxAge = "1d")
		@Scheduled(cron = "0 0 0 1 1 *", zone = "UTC")
		public void tooOld() {
			this.calls.incrementAndGet();
		}

	}

	public static class ReactiveEverySecond {

		final AtomicInteger subscriptions = new AtomicInteger();

		public int subscriptions() {
			return this.subscriptions.get();
		}

		@OnlyOnLeader
		@Scheduled(cron = "* * * * * *")
		public Mono<Void> tick() {
			return Mono.defer(() -> {
				int count = this.subscriptions.incrementAndGet();
				return (count % 2 == 1) ? Mono.delay(Duration.ofMillis(50)).then()
						: Mono.error(new IllegalStateException("every other run fails"));
			});
		}

	}

	public static class CatchUpOnFixedDelay {

		@OnlyOnLeader(missedTicks = MissedTickPolicy.RUN_ONCE)
		@Scheduled(fixedDelay = 1000)
		public void poll() {
		}

	}

	public static class BadMaxAge {

		@OnlyOnLeader(missedTickMaxAge = "soon")
		@Scheduled(cron = "0 0 2 * * *")
		public void nightly() {
		}

	}

}
