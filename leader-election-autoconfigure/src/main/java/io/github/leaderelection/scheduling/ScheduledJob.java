package io.github.leaderelection.scheduling;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.aop.JobTick;
import io.github.leaderelection.aop.ScheduledTicks;
import io.github.leaderelection.jobs.JobSchedule;
import io.github.leaderelection.jobs.LeaderOnlyJob;
import io.github.leaderelection.jobs.MissedTick;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.core.task.TaskRejectedException;
import org.springframework.scheduling.SchedulingAwareRunnable;
import org.springframework.scheduling.TaskScheduler;

/**
 * One scheduled leader-only method as a job of its group: the scheduler's task that calls
 * it, the ticks it fires, their claims and records, and the catch-up a new leader runs.
 */
public final class ScheduledJob {

	private static final Logger logger = LoggerFactory.getLogger(ScheduledJob.class);

	/** The name of the observation of each run. */
	static final String OBSERVATION = "leader.election.job.run";

	/**
	 * How far ahead of this instance's clock the last run's tick may lie before a refused
	 * claim is blamed on a clock that is off: more than a scheduler's lateness, less than
	 * anything an operator would let pass.
	 */
	static final Duration CLOCK_TOLERANCE = Duration.ofSeconds(10);

	private final LeaderOnlyJob job;

	private final String method;

	private final String methodName;

	private final Runnable task;

	private final TaskScheduler scheduler;

	private final Clock clock;

	private final ObservationRegistry observations;

	private final JobStats stats = new JobStats();

	private volatile @Nullable ScheduledFuture<?> future;

	/** The tick ahead of this clock last warned of, so that each is warned of once. */
	private volatile long warnedTickAhead;

	/** The term in which this instance last looked for the ticks missed before it. */
	private volatile long caughtUpTerm;

	/**
	 * @param job the job, with its group, name, schedule and policy
	 * @param method the method, for operators ({@code "ReportJob.nightly()"})
	 * @param methodName the method's own name ({@code "nightly"})
	 * @param task the scheduler's task that calls it
	 * @param scheduler the scheduler that runs its catch-up
	 * @param clock the scheduler's clock, which dates ticks and runs
	 * @param observations where each run is observed
	 */
	ScheduledJob(LeaderOnlyJob job, String method, String methodName, Runnable task, TaskScheduler scheduler,
			Clock clock, ObservationRegistry observations) {
		this.job = Objects.requireNonNull(job, "job");
		this.method = Objects.requireNonNull(method, "method");
		this.methodName = Objects.requireNonNull(methodName, "methodName");
		this.task = Objects.requireNonNull(task, "task");
		this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
		this.clock = Objects.requireNonNull(clock, "clock");
		this.observations = Objects.requireNonNull(observations, "observations");
	}

	/** The job: its group, name, schedule and policy. */
	public LeaderOnlyJob job() {
		return this.job;
	}

	/** The method, as {@code "ReportJob.nightly()"}. */
	public String method() {
		return this.method;
	}

	/** What this instance saw of the job. */
	public JobStats stats() {
		return this.stats;
	}

	/** When the scheduler fires the method next on this instance, if it will. */
	public Optional<Instant> nextTick() {
		ScheduledFuture<?> current = this.future;
		if (current == null || current.isDone()) {
			return Optional.empty();
		}
		return Optional.of(this.clock.instant().plusMillis(Math.max(0, current.getDelay(TimeUnit.MILLISECONDS))));
	}

	void scheduled(ScheduledFuture<?> future) {
		this.future = future;
	}

	Clock clock() {
		return this.clock;
	}

	/**
	 * Runs the scheduler's task for a tick it fired. The first tick of a term first looks
	 * for the ticks missed before it, whether the grant's event has come yet or not: a
	 * tick claimed first would make the ones before it unclaimable.
	 */
	void fire(Instant tick) {
		catchUpOncePerTerm(tick.minusMillis(1));
		ScheduledTicks.fire(new Tick(tick, false), this.task);
	}

	/**
	 * Asks the scheduler to look for ticks missed, and run the job once for them if its
	 * policy says so; on the thread the method's task runs on, not the caller's.
	 */
	void catchUpSoon() {
		if (this.job.schedule() instanceof JobSchedule.FixedDelay) {
			return;
		}
		try {
			this.scheduler.schedule(new CatchUp(), this.clock.instant());
		}
		catch (TaskRejectedException ex) {
			// The scheduler is shutting down: so is this instance, which catches up
			// nothing.
			logger.debug("Did not look for the ticks {} missed: the scheduler refused the task", this.method, ex);
		}
	}

	/**
	 * Catches up once in each term this instance leads: at the grant's event, or at the
	 * term's first tick if that comes first. A fixed-delay job has no ticks to miss.
	 * @param lookBackFrom the newest instant a missed tick may have
	 */
	private void catchUpOncePerTerm(Instant lookBackFrom) {
		if (this.job.schedule() instanceof JobSchedule.FixedDelay) {
			return;
		}
		this.job.election()
			.leadership()
			.filter((leadership) -> leadership.term() != this.caughtUpTerm)
			.ifPresent((leadership) -> catchUp(leadership.term(), lookBackFrom));
	}

	/**
	 * Looks for the ticks missed up to {@code lookBackFrom} and runs the job once for
	 * them if its policy says so.
	 * @param term the term this instance leads in, for which the ticks are looked for
	 * once
	 * @param lookBackFrom the newest instant a missed tick may have
	 */
	private void catchUp(long term, Instant lookBackFrom) {
		MissedTick missed;
		try {
			missed = this.job.missedTick(lookBackFrom).orElse(null);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not look for the ticks {} missed in group '{}', so none is caught up now: {}",
					this.method, group(), ex.getMessage());
			return;
		}
		this.caughtUpTerm = term;
		if (missed == null) {
			return;
		}
		if (!missed.run()) {
			this.stats.missedSkipped(missed.newest());
			logger.info("Skipped the ticks of {} missed in group '{}' from {} to {} ({})", this.method, group(),
					missed.first(), missed.newest(), this.job.missedTicks());
			return;
		}
		logger.info("Running {} once now for its ticks missed in group '{}' from {} to {}", this.method, group(),
				missed.first(), missed.newest());
		ScheduledTicks.fire(new Tick(missed.newest(), true), this.task);
	}

	private String group() {
		return this.job.group();
	}

	/**
	 * Warns, once per last run, when a claim was refused because the last run's tick lies
	 * far ahead of this instance's clock: the job would otherwise stop here without a
	 * word until this clock passes it.
	 * @return whether the refusal is explained so
	 */
	private boolean warnedOfClockAhead(Instant tick) {
		RunRecord ahead;
		try {
			ahead = this.job.lastRunAhead(this.clock.instant(), CLOCK_TOLERANCE).orElse(null);
		}
		catch (RuntimeException ex) {
			return false;
		}
		if (ahead == null) {
			return false;
		}
		if (this.warnedTickAhead != ahead.tick()) {
			this.warnedTickAhead = ahead.tick();
			Instant last = Instant.ofEpochMilli(ahead.tick());
			logger.warn("Did not run {} for its tick {} in group '{}': its last run, by '{}' in term {}, was for tick "
					+ "{}, {} ahead of this instance's clock. That instance's clock is ahead, or this one's behind; "
					+ "no tick up to {} runs until this clock passes it. Keep the instances' clocks in sync (NTP).",
					this.method, tick, group(), ahead.holder(), ahead.term(), last, Duration.between(tick, last), last);
		}
		return true;
	}

	@Override
	public String toString() {
		return this.method + " as " + this.job;
	}

	/** One tick of the job, claimed and recorded by the gate of its method. */
	private final class Tick implements JobTick {

		private final Instant tick;

		private final boolean catchUp;

		private volatile @Nullable Observation observation;

		Tick(Instant tick, boolean catchUp) {
			this.tick = tick;
			this.catchUp = catchUp;
		}

		@Override
		public String methodName() {
			return ScheduledJob.this.methodName;
		}

		@Override
		public @Nullable RunRecord claim() {
			long started = System.nanoTime();
			Optional<RunRecord> claimed;
			try {
				claimed = ScheduledJob.this.job.claim(this.tick, ScheduledJob.this.clock.instant());
			}
			catch (RuntimeException ex) {
				ScheduledJob.this.stats.claimFailed(System.nanoTime() - started);
				logger.warn("Did not run {} for its tick {} in group '{}': the tick could not be claimed: {}",
						ScheduledJob.this.method, this.tick, group(), ex.getMessage());
				return null;
			}
			ScheduledJob.this.stats.claimed(System.nanoTime() - started);
			if (claimed.isEmpty()) {
				if (ScheduledJob.this.job.election().isLeader()) {
					ScheduledJob.this.stats.alreadyRun();
					if (!warnedOfClockAhead(this.tick)) {
						logger.info(
								"Did not run {} for its tick {} in group '{}': that tick, or one less than {} "
										+ "before it, was already run",
								ScheduledJob.this.method, this.tick, group(),
								ScheduledJob.this.job.schedule().minInterval());
					}
				}
				return null;
			}
			RunRecord run = claimed.get();
			if (this.catchUp) {
				ScheduledJob.this.stats.caughtUp(run);
			}
			this.observation = Observation.createNotStarted(OBSERVATION, ScheduledJob.this.observations)
				.contextualName("leader-only run")
				.lowCardinalityKeyValue("group", group())
				.lowCardinalityKeyValue("job", ScheduledJob.this.job.name())
				.lowCardinalityKeyValue("catch-up", String.valueOf(this.catchUp))
				.highCardinalityKeyValue("tick", this.tick.toString())
				.highCardinalityKeyValue("term", String.valueOf(run.term()))
				.start();
			logger.debug("Running {} for its tick {} in group '{}', term {}", ScheduledJob.this.method, this.tick,
					group(), run.term());
			return run;
		}

		@Override
		public void finish(RunRecord run, RunOutcome outcome) {
			ScheduledJob.this.stats.ended(outcome);
			Observation current = this.observation;
			if (current != null) {
				current.lowCardinalityKeyValue("outcome", outcome.name().toLowerCase(Locale.ROOT)).stop();
			}
			try {
				if (!ScheduledJob.this.job.finish(run, outcome, ScheduledJob.this.clock.instant())) {
					logger.info(
							"The run of {} for its tick {} in group '{}' ended ({}) after a later run was "
									+ "claimed: its end is not recorded",
							ScheduledJob.this.method, this.tick, group(), outcome);
				}
			}
			catch (RuntimeException ex) {
				logger.warn("Could not record that the run of {} for its tick {} in group '{}' ended ({}): {}",
						ScheduledJob.this.method, this.tick, group(), outcome, ex.getMessage());
			}
		}

	}

	/**
	 * The catch-up, run where the scheduler runs the method's task (the same qualified
	 * scheduler).
	 */
	private final class CatchUp implements SchedulingAwareRunnable {

		@Override
		public void run() {
			catchUpOncePerTerm(ScheduledJob.this.clock.instant());
		}

		@Override
		public @Nullable String getQualifier() {
			return (ScheduledJob.this.task instanceof SchedulingAwareRunnable aware) ? aware.getQualifier() : null;
		}

		@Override
		public String toString() {
			return "catch-up of " + ScheduledJob.this.method;
		}

	}

}
