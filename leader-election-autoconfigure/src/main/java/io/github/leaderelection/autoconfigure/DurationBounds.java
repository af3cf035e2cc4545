package io.github.leaderelection.autoconfigure;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import org.springframework.boot.convert.DurationStyle;

/**
 * The range checks of the duration properties, made before a value reaches the engine or
 * a client, whose arithmetic in nanoseconds or int milliseconds would otherwise overflow
 * with an error that names no property.
 */
final class DurationBounds {

	/**
	 * The longest lease, renew deadline, retry period or session: a leader that vanished
	 * would keep its groups leaderless that long, and longer values only approach the
	 * overflow of the engine's nanosecond clock arithmetic.
	 */
	static final Duration ONE_DAY = Duration.ofDays(1);

	/**
	 * The longest connection or shutdown wait: startup or shutdown blocked longer than
	 * that is an outage, not a wait.
	 */
	static final Duration ONE_HOUR = Duration.ofHours(1);

	/**
	 * The longest age of a missed tick worth bounding: beyond it, leave the bound out
	 * (any age).
	 */
	static final Duration ONE_YEAR = Duration.ofDays(366);

	private DurationBounds() {
	}

	/**
	 * Fails unless the value is positive and at most the maximum.
	 * @param property the property's full name
	 * @param value its value
	 * @param maximum the largest value accepted
	 * @param fix what the value is for and its usual value, such as "how long ... for
	 * example 5s (the default)"
	 * @return the value
	 */
	static Duration requirePositiveAtMost(String property, Duration value, Duration maximum, String fix) {
		if (value.isNegative() || value.isZero()) {
			throw new LeaderElectionConfigurationException(
					"Invalid value '" + print(value) + "' for " + property + ": it must be positive",
					"Set " + property + " to " + fix + ".");
		}
		return requireAtMost(property, value, maximum, fix);
	}

	/**
	 * Fails if the value is above the maximum.
	 * @param property the property's full name
	 * @param value its value
	 * @param maximum the largest value accepted
	 * @param fix what the value is for and its usual value
	 * @return the value
	 */
	static Duration requireAtMost(String property, Duration value, Duration maximum, String fix) {
		if (value.compareTo(maximum) > 0) {
			throw new LeaderElectionConfigurationException(
					"Invalid value '" + print(value) + "' for " + property + ": it must be at most " + print(maximum),
					"Set " + property + " to " + fix + ", at most " + print(maximum) + ".");
		}
		return value;
	}

	/**
	 * A duration as a user writes it: in whole days or hours when it is one (a value far
	 * out of range reads better so), otherwise in seconds or milliseconds.
	 */
	static String print(Duration duration) {
		if (!duration.isZero() && duration.toNanosPart() == 0 && duration.toSecondsPart() == 0
				&& duration.toMinutesPart() == 0) {
			return (duration.toHoursPart() == 0) ? DurationStyle.SIMPLE.print(duration, ChronoUnit.DAYS)
					: DurationStyle.SIMPLE.print(duration, ChronoUnit.HOURS);
		}
		return (duration.getNano() == 0) ? DurationStyle.SIMPLE.print(duration, ChronoUnit.SECONDS)
				: DurationStyle.SIMPLE.print(duration);
	}

}
