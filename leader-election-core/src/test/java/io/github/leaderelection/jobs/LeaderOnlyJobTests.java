package io.github.leaderelection.jobs;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.engine.VirtualElectionScheduler;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@link LeaderOnlyJob}: each tick claimed once across a hand-over, the ticks missed
 * while nobody led found by the next leader, on virtual time.
 */
class LeaderOnlyJobTests {

	private static final ElectionTiming TIMING = new ElectionTiming(Duration.ofMillis(3000), Duration.ofMillis(2000),
			Duration.ofMillis(250));

	private static final Duration STEP = Duration.ofMillis(10);

	private static final Duration WAIT = Duration.ofSeconds(60);

	private static final Instant T0 = Instant.parse("2026-11-28T01:59:00Z");

	/** Every full minute. */
	private static final JobSchedule EVERY_MINUTE = JobSchedule.calendar("0 * * * * *",
			(after) -> after.truncatedTo(ChronoUnit.MINUTES).plus(1, ChronoUnit.MINUTES));

	/** Every full second. */
	private static final JobSchedule EVERY_SECOND = JobSchedule.calendar("* * * * * *",
			(after) -> after.truncatedTo(ChronoUnit.SECONDS).plusSeconds(1));

	private final VirtualElectionScheduler time = new VirtualElectionScheduler();

	private final InMemoryLeaseStore store = new InMemoryLeaseStore(this.time::nanoTime);

	private final List<LeaderElectionEngine> engines = new ArrayList<>();

	@AfterEach
	void closeEngines() {
		this.engines.forEach(LeaderElectionEngine::close);
	}

	@Test
	void aTickClaimedByTheOldLeaderIsNotRunByTheNewOneWhoseClockFiresItLater() {
		LeaderElectionEngine a = engine("a");
		LeaderElection electionA = a.join("reports");
		a.start();
		this.time.advanceUntil(electionA::isLeader, STEP, WAIT);
		LeaderOnlyJob jobOnA = new LeaderOnlyJob(electionA, "nightly", EVERY_MINUTE, MissedTicks.runOnce());
		Instant tick = T0.plusSeconds(60);
		RunRecord run = jobOnA.claim(tick, tick).orElseThrow();
		jobOnA.finish(run, RunOutcome.SUCCEEDED, tick.plusSeconds(1));
		LeaderElectionEngine b = engine("b");
		LeaderElection electionB = b.join("reports");
		b.start();
		a.close();
		this.time.advanceUntil(electionB::isLeader, STEP, WAIT);
		LeaderOnlyJob jobOnB = new LeaderOnlyJob(electionB, "nightly", EVERY_MINUTE, MissedTicks.runOnce());
		assertThat(jobOnB.claim(tick, tick.plusMillis(300))).as("the same tick, fired late by b's clock").isEmpty();
		assertThat(jobOnB.missedTick(tick.plusSeconds(5))).as("nothing missed").isEmpty();
		assertThat(jobOnB.claim(tick.plusSeconds(60), tick.plusSeconds(60))).isPresent();
	}

	@Test
	void aFixedRateJobOnAnotherPhaseWaitsOnePeriodAfterTheLastTick() {
		LeaderElection election = leader("a");
		LeaderOnlyJob job = new LeaderOnlyJob(election, "sync", JobSchedule.fixedRate(Duration.ofSeconds(10)),
				MissedTicks.runOnce());
		assertThat(job.claim(T0, T0)).isPresent();
		assertThat(job.claim(T0.plusSeconds(4), T0.plusSeconds(4))).as("another phase, too soon").isEmpty();
		assertThat(job.claim(T0.plusSeconds(10), T0.plusSeconds(10))).as("one period later").isPresent();
	}

	@Test
	void aFixedDelayJobLetsItsOwnRunsThroughAndMissesNothing() {
		LeaderElection election = leader("a");
		LeaderOnlyJob job = new LeaderOnlyJob(election, "poll", JobSchedule.fixedDelay(Duration.ofSeconds(1)),
				MissedTicks.runOnce());
		assertThat(job.claim(T0, T0)).isPresent();
		assertThat(job.claim(T0.plusMillis(995), T0.plusMillis(995))).as("within the wall clock's slack").isPresent();
		assertThat(job.missedTick(T0.plusSeconds(3600))).isEmpty();
	}

	@Test
	void theNewestTickMissedIsRunOnceForAll() {
		LeaderOnlyJob job = new LeaderOnlyJob(leader("a"), "nightly", EVERY_MINUTE, MissedTicks.runOnce());
		job.claim(T0, T0).orElseThrow();
		Instant now = T0.plusSeconds(5 * 60 + 20);
		MissedTick missed = job.missedTick(now).orElseThrow();
		assertThat(missed.first()).isEqualTo(T0.plusSeconds(60));
		assertThat(missed.newest()).isEqualTo(T0.plusSeconds(5 * 60));
		assertThat(missed.run()).isTrue();
		assertThat(job.claim(missed.newest(), now)).isPresent();
		assertThat(job.missedTick(now)).as("caught up").isEmpty();
	}

	@Test
	void aJobDueEverySecondLastRunDaysAgoFindsItsNewestTick() {
		LeaderOnlyJob job = new LeaderOnlyJob(leader("a"), "heartbeat", EVERY_SECOND, MissedTicks.runOnce());
		Instant now = T0.plus(Duration.ofDays(3)).plusMillis(400);
		MissedTick missed = job.missedSince(T0, now).orElseThrow();
		assertThat(missed.first()).isEqualTo(T0.plusSeconds(1));
		assertThat(missed.newest()).isEqualTo(now.truncatedTo(ChronoUnit.SECONDS));
	}

	@Test
	void aFixedRateJobMissedOnTheRecordedPhase() {
		LeaderOnlyJob job = new LeaderOnlyJob(leader("a"), "sync", JobSchedule.fixedRate(Duration.ofSeconds(10)),
				MissedTicks.runOnce());
		assertThat(job.missedSince(T0, T0.plusSeconds(9))).isEmpty();
		MissedTick missed = job.missedSince(T0, T0.plusSeconds(35)).orElseThrow();
		assertThat(missed.first()).isEqualTo(T0.plusSeconds(10));
		assertThat(missed.newest()).isEqualTo(T0.plusSeconds(30));
	}

	@Test
	void ticksOlderThanTheMaximumAgeOrUnderTheSkipPolicyAreFoundButNotRun() {
		LeaderElection election = leader("a");
		LeaderOnlyJob within = new LeaderOnlyJob(election, "a", EVERY_MINUTE,
				MissedTicks.runOnceWithin(Duration.ofMinutes(10)));
		assertThat(within.missedSince(T0, T0.plusSeconds(60 + 30)))
			.hasValueSatisfying((m) -> assertThat(m.run()).isTrue());
		LeaderOnlyJob hourly = new LeaderOnlyJob(election, "b",
				JobSchedule.calendar("0 0 * * * *",
						(after) -> after.truncatedTo(ChronoUnit.HOURS).plus(1, ChronoUnit.HOURS)),
				MissedTicks.runOnceWithin(Duration.ofMinutes(10)));
		assertThat(hourly.missedSince(T0, T0.plusSeconds(52 * 60))).hasValueSatisfying((m) -> {
			assertThat(m.newest()).isEqualTo(Instant.parse("2026-11-28T02:00:00Z"));
			assertThat(m.run()).as("51 minutes old").isFalse();
		});
		LeaderOnlyJob skipping = new LeaderOnlyJob(election, "c", EVERY_MINUTE, MissedTicks.skip());
		assertThat(skipping.missedSince(T0, T0.plusSeconds(90)))
			.hasValueSatisfying((m) -> assertThat(m.run()).isFalse());
	}

	@Test
	void aLastRunFarAheadOfThisClockIsFoundAsSuch() {
		LeaderOnlyJob job = new LeaderOnlyJob(leader("a"), "nightly", EVERY_MINUTE, MissedTicks.runOnce());
		assertThat(job.lastRunAhead(T0, Duration.ofSeconds(10))).as("never ran").isEmpty();
		Instant ahead = T0.plus(Duration.ofHours(5));
		job.claim(ahead, ahead).orElseThrow();
		assertThat(job.lastRunAhead(T0, Duration.ofSeconds(10)))
			.hasValueSatisfying((run) -> assertThat(run.tick()).isEqualTo(ahead.toEpochMilli()));
		assertThat(job.lastRunAhead(ahead.minusSeconds(5), Duration.ofSeconds(10))).as("within the tolerance")
			.isEmpty();
		assertThat(job.claim(T0.plusSeconds(60), T0.plusSeconds(60))).as("a tick of this clock").isEmpty();
	}

	@Test
	void aJobThatNeverRanHasMissedNothing() {
		LeaderOnlyJob job = new LeaderOnlyJob(leader("a"), "new", EVERY_MINUTE, MissedTicks.runOnce());
		assertThat(job.missedTick(T0.plus(Duration.ofDays(1)))).isEmpty();
		assertThat(job.lastRun()).isEmpty();
	}

	@Test
	void aStoreWithoutRunRecordsIsRefusedByName() {
		LeaderElectionEngine engine = LeaderElectionEngine.builder(new ForwardingLeaseStore(this.store) {
		}).candidateId("a").timing(TIMING).scheduler(this.time).build();
		this.engines.add(engine);
		LeaderElection election = engine.join("reports");
		assertThatIllegalStateException()
			.isThrownBy(() -> new LeaderOnlyJob(election, "nightly", EVERY_MINUTE, MissedTicks.runOnce()))
			.withMessage(
					"The store of group 'reports' keeps no run records, so job 'nightly' cannot be run once per tick");
	}

	@Test
	void policiesDescribeThemselves() {
		assertThat(MissedTicks.runOnce()).hasToString("run once");
		assertThat(MissedTicks.runOnceWithin(Duration.ofHours(1))).hasToString("run once if at most PT1H old");
		assertThat(MissedTicks.skip()).hasToString("skip");
		assertThat(JobSchedule.fixedRate(Duration.ofSeconds(1))).hasToString("fixed rate PT1S");
		assertThat(Optional.of(EVERY_MINUTE)).hasValueSatisfying((s) -> assertThat(s).hasToString("cron 0 * * * * *"));
	}

	private LeaderElection leader(String id) {
		LeaderElectionEngine engine = engine(id);
		LeaderElection election = engine.join("reports");
		engine.start();
		this.time.advanceUntil(election::isLeader, STEP, WAIT);
		return election;
	}

	private LeaderElectionEngine engine(String id) {
		LeaderElectionEngine engine = LeaderElectionEngine.builder(this.store)
			.candidateId(id)
			.timing(TIMING)
			.scheduler(this.time)
			.build();
		this.engines.add(engine);
		return engine;
	}

}
