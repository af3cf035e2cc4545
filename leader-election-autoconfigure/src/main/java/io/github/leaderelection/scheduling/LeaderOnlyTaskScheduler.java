package io.github.leaderelection.scheduling;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;

import io.github.leaderelection.jobs.JobSchedule;
import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.Trigger;
import org.springframework.scheduling.support.CronTrigger;
import org.springframework.scheduling.support.SimpleTriggerContext;

/**
 * The application's task scheduler, as Spring's scheduled-task registrar uses it, with
 * the tasks of scheduled leader-only methods turned into jobs whose ticks are claimed
 * before they run. Every other task, and every task's schedule, is left as it is.
 */
final class LeaderOnlyTaskScheduler implements TaskScheduler {

	private final TaskScheduler delegate;

	private final ScheduledJobs jobs;

	LeaderOnlyTaskScheduler(TaskScheduler delegate, ScheduledJobs jobs) {
		this.delegate = Objects.requireNonNull(delegate, "delegate");
		this.jobs = Objects.requireNonNull(jobs, "jobs");
	}

	@Override
	public Clock getClock() {
		return this.delegate.getClock();
	}

	@Override
	public @Nullable ScheduledFuture<?> schedule(Runnable task, Trigger trigger) {
		ScheduledJob job = this.jobs.register(task, calendar(trigger), this.delegate);
		if (job == null) {
			return this.delegate.schedule(task, trigger);
		}
		TickedTask.TriggerTicks ticks = new TickedTask.TriggerTicks(trigger);
		return scheduled(job, this.delegate.schedule(TickedTask.onTrigger(job, task, ticks), ticks));
	}

	@Override
	public ScheduledFuture<?> schedule(Runnable task, Instant startTime) {
		return this.delegate.schedule(task, startTime);
	}

	@Override
	public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, Instant startTime, Duration period) {
		ScheduledJob job = this.jobs.register(task, JobSchedule.fixedRate(period), this.delegate);
		if (job == null) {
			return this.delegate.scheduleAtFixedRate(task, startTime, period);
		}
		return scheduled(job, this.delegate.scheduleAtFixedRate(TickedTask.atFixedRate(job, task, startTime, period),
				startTime, period));
	}

	@Override
	public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, Duration period) {
		ScheduledJob job = this.jobs.register(task, JobSchedule.fixedRate(period), this.delegate);
		if (job == null) {
			return this.delegate.scheduleAtFixedRate(task, period);
		}
		Instant start = getClock().instant();
		return scheduled(job,
				this.delegate.scheduleAtFixedRate(TickedTask.atFixedRate(job, task, start, period), start, period));
	}

	@Override
	public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Instant startTime, Duration delay) {
		ScheduledJob job = this.jobs.register(task, JobSchedule.fixedDelay(delay), this.delegate);
		if (job == null) {
			return this.delegate.scheduleWithFixedDelay(task, startTime, delay);
		}
		return scheduled(job, this.delegate.scheduleWithFixedDelay(TickedTask.withFixedDelay(job, task, getClock()),
				startTime, delay));
	}

	@Override
	public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Duration delay) {
		ScheduledJob job = this.jobs.register(task, JobSchedule.fixedDelay(delay), this.delegate);
		if (job == null) {
			return this.delegate.scheduleWithFixedDelay(task, delay);
		}
		return scheduled(job,
				this.delegate.scheduleWithFixedDelay(TickedTask.withFixedDelay(job, task, getClock()), delay));
	}

	private static <F extends @Nullable ScheduledFuture<?>> F scheduled(ScheduledJob job, F future) {
		if (future != null) {
			job.scheduled(future);
		}
		return future;
	}

	/**
	 * The instants a trigger computes, as a calendar: asked with no run yet, a cron
	 * trigger answers its first instant after the clock's.
	 */
	private JobSchedule calendar(Trigger trigger) {
		String description = (trigger instanceof CronTrigger cron) ? cron.getExpression() : trigger.toString();
		Clock clock = getClock();
		return JobSchedule.calendar(description,
				(after) -> trigger.nextExecution(new SimpleTriggerContext(Clock.fixed(after, clock.getZone()))));
	}

	@Override
	public String toString() {
		return "LeaderOnlyTaskScheduler on " + this.delegate;
	}

}
