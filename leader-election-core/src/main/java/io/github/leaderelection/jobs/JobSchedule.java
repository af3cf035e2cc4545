package io.github.leaderelection.jobs;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * When a leader-only job is due: at the instants of a calendar (a cron expression), at a
 * fixed rate, or a fixed delay after its last run ended.
 */
public sealed interface JobSchedule {

	/**
	 * How long after the last run's tick the next one's may be, at least: the rule a
	 * claim asks the store to apply, so that a new leader on another phase does not run
	 * the job again too soon.
	 * @return the shortest interval between two runs' ticks
	 */
	Duration minInterval();

	/**
	 * A schedule of calendar instants, such as a cron expression's.
	 * @param description what the schedule is, for operators ({@code "0 0 2 * * *"})
	 * @param next the first instant of the schedule strictly after the one given, or null
	 * when there is none
	 * @return the schedule
	 */
	static JobSchedule calendar(String description, NextTick next) {
		return new Calendar(description, next);
	}

	/**
	 * A schedule of one run per period; a tick is the instant a run was due.
	 * @param period the period
	 * @return the schedule
	 */
	static JobSchedule fixedRate(Duration period) {
		return new FixedRate(period);
	}

	/**
	 * A schedule of one run a delay after the last one ended; a tick is the instant a run
	 * started. Its runs are not due at instants of their own, so none is ever missed.
	 * @param delay the delay
	 * @return the schedule
	 */
	static JobSchedule fixedDelay(Duration delay) {
		return new FixedDelay(delay);
	}

	/** The next instant of a calendar. */
	@FunctionalInterface
	interface NextTick {

		/**
		 * @param after an instant
		 * @return the first instant of the calendar strictly after it, or null if none
		 */
		@Nullable Instant after(Instant after);

	}

	/**
	 * A schedule of calendar instants.
	 *
	 * @param description what the schedule is
	 * @param next the next instant after a given one
	 */
	record Calendar(String description, NextTick next) implements JobSchedule {

		public Calendar {
			Objects.requireNonNull(description, "description");
			Objects.requireNonNull(next, "next");
		}

		/** Any later tick: two instants of a calendar are two runs. */
		@Override
		public Duration minInterval() {
			return Duration.ZERO;
		}

		@Override
		public String toString() {
			return "cron " + this.description;
		}

	}

	/**
	 * One run per period.
	 *
	 * @param period the period
	 */
	record FixedRate(Duration period) implements JobSchedule {

		public FixedRate {
			requirePositive(period, "period");
		}

		/** One period: the ticks of one instance are exactly a period apart. */
		@Override
		public Duration minInterval() {
			return this.period;
		}

		@Override
		public String toString() {
			return "fixed rate " + this.period;
		}

	}

	/**
	 * One run a delay after the last one ended.
	 *
	 * @param delay the delay
	 */
	record FixedDelay(Duration delay) implements JobSchedule {

		public FixedDelay {
			requirePositive(delay, "delay");
		}

		/**
		 * The delay, less a hundredth of it: a run starts at least the delay after the
		 * last one started, by the scheduler's monotonic clock; the wall clock that dates
		 * the ticks may run a little slower than it.
		 */
		@Override
		public Duration minInterval() {
			return this.delay.minus(this.delay.dividedBy(100));
		}

		@Override
		public String toString() {
			return "fixed delay " + this.delay;
		}

	}

	private static void requirePositive(Duration duration, String name) {
		Objects.requireNonNull(duration, name);
		if (duration.isNegative() || duration.isZero()) {
			throw new IllegalArgumentException(name + " must be positive, but was " + duration);
		}
	}

}
