package io.github.leaderelection.scheduling;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.SchedulingAwareRunnable;
import org.springframework.scheduling.Trigger;
import org.springframework.scheduling.TriggerContext;

/**
 * The scheduler's task of a scheduled leader-only method, which tells the method's gate
 * which tick it runs for: the instant its trigger computed (a cron instant), the instant
 * a fixed-rate run was due, or the start of a fixed-delay run.
 */
final class TickedTask implements SchedulingAwareRunnable {

	private final ScheduledJob job;

	private final Runnable task;

	private final TickSource ticks;

	private TickedTask(ScheduledJob job, Runnable task, TickSource ticks) {
		this.job = job;
		this.task = task;
		this.ticks = ticks;
	}

	/**
	 * The task of a method run at the instants a trigger computes: schedule it with
	 * {@code ticks}, which notes them.
	 */
	static TickedTask onTrigger(ScheduledJob job, Runnable task, TriggerTicks ticks) {
		return new TickedTask(job, task, ticks);
	}

	/**
	 * The task of a fixed-rate method whose first run is due at {@code start}: the ticks
	 * are the start and every period after it, whenever the runs actually start.
	 */
	static TickedTask atFixedRate(ScheduledJob job, Runnable task, Instant start, Duration period) {
		return new TickedTask(job, task, new RateTicks(start, period));
	}

	/** The task of a fixed-delay method: each run's tick is its start. */
	static TickedTask withFixedDelay(ScheduledJob job, Runnable task, Clock clock) {
		return new TickedTask(job, task, () -> clock.instant());
	}

	@Override
	public void run() {
		this.job.fire(this.ticks.next());
	}

	@Override
	public boolean isLongLived() {
		return (this.task instanceof SchedulingAwareRunnable aware) && aware.isLongLived();
	}

	@Override
	public @Nullable String getQualifier() {
		return (this.task instanceof SchedulingAwareRunnable aware) ? aware.getQualifier() : null;
	}

	@Override
	public String toString() {
		return this.task.toString();
	}

	/** Where the tick of each run comes from. */
	@FunctionalInterface
	interface TickSource {

		/** The tick of the run starting now. */
		Instant next();

	}

	/**
	 * A trigger that notes the instant it computed last: the scheduler runs the task at
	 * that instant, and asks for the next one only once the run has ended.
	 */
	static final class TriggerTicks implements Trigger, TickSource {

		private final Trigger trigger;

		private volatile @Nullable Instant scheduled;

		TriggerTicks(Trigger trigger) {
			this.trigger = trigger;
		}

		@Override
		public @Nullable Instant nextExecution(TriggerContext context) {
			Instant next = this.trigger.nextExecution(context);
			this.scheduled = next;
			return next;
		}

		@Override
		public Instant next() {
			Instant current = this.scheduled;
			if (current == null) {
				throw new IllegalStateException("Ran before its trigger computed an instant");
			}
			return current;
		}

		@Override
		public String toString() {
			return this.trigger.toString();
		}

	}

	/**
	 * The ticks of a fixed rate: the k-th run is due a whole number of periods after the
	 * first, whenever it starts, so that one instance's ticks are exactly a period apart.
	 */
	private static final class RateTicks implements TickSource {

		private final long start;

		private final long period;

		private final AtomicLong runs = new AtomicLong();

		RateTicks(Instant start, Duration period) {
			this.start = start.toEpochMilli();
			this.period = period.toMillis();
		}

		@Override
		public Instant next() {
			return Instant.ofEpochMilli(this.start + this.runs.getAndIncrement() * this.period);
		}

	}

}
