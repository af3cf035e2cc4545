package io.github.leaderelection.jobs;

import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * What a new leader does with the ticks of a job that passed unrun since its last
 * recorded run: run the job once for all of them (Quartz's "fire once now", the default),
 * or skip them. Either way, a tick older than {@code maxAge} is skipped.
 *
 * @param catchUp whether to run the job once for the ticks missed
 * @param maxAge how old the newest tick missed may be for it to be run; null for any age
 */
public record MissedTicks(boolean catchUp, @Nullable Duration maxAge) {

	public MissedTicks {
		if (maxAge != null && (maxAge.isNegative() || maxAge.isZero())) {
			throw new IllegalArgumentException("maxAge must be positive, but was " + maxAge);
		}
	}

	/**
	 * Run once for the ticks missed, whatever their age.
	 * @return the policy
	 */
	public static MissedTicks runOnce() {
		return new MissedTicks(true, null);
	}

	/**
	 * Run once for the ticks missed, if the newest of them is at most {@code maxAge} old.
	 * @param maxAge the age
	 * @return the policy
	 */
	public static MissedTicks runOnceWithin(Duration maxAge) {
		return new MissedTicks(true, Objects.requireNonNull(maxAge, "maxAge"));
	}

	/**
	 * Skip the ticks missed.
	 * @return the policy
	 */
	public static MissedTicks skip() {
		return new MissedTicks(false, null);
	}

	@Override
	public String toString() {
		if (!this.catchUp) {
			return "skip";
		}
		return (this.maxAge != null) ? "run once if at most " + this.maxAge + " old" : "run once";
	}

}
