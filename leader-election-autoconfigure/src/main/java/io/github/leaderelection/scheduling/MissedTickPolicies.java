package io.github.leaderelection.scheduling;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import io.github.leaderelection.OnlyOnLeader;
import io.github.leaderelection.OnlyOnLeader.MissedTickPolicy;
import io.github.leaderelection.jobs.MissedTicks;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.annotation.Schedules;

/**
 * The missed-tick policy of a scheduled leader-only method: its annotation's, else the
 * application's default; and the annotations that cannot apply, found at startup.
 */
public final class MissedTickPolicies {

	private MissedTickPolicies() {
	}

	/**
	 * The policy of a method whose annotation passed {@link #problems}.
	 * @param annotation the method's {@code @OnlyOnLeader}
	 * @param defaults the application's default policy
	 * @return the policy
	 */
	static MissedTicks resolve(OnlyOnLeader annotation, MissedTicks defaults) {
		boolean catchUp = switch (annotation.missedTicks()) {
			case DEFAULT -> defaults.catchUp();
			case RUN_ONCE -> true;
			case SKIP -> false;
		};
		Duration maxAge = annotation.missedTickMaxAge().isEmpty() ? defaults.maxAge()
				: DurationStyle.detectAndParse(annotation.missedTickMaxAge());
		return new MissedTicks(catchUp, maxAge);
	}

	/**
	 * What in a leader-only method's annotation cannot apply: a maximum age that is not a
	 * positive duration, or a catch-up asked of a method scheduled with a fixed delay,
	 * which has no ticks to miss.
	 * @param method the method
	 * @param annotation its {@code @OnlyOnLeader}
	 * @param name the method's name for the messages
	 * @return each problem with its fix, none if the annotation can apply
	 */
	public static List<Problem> problems(Method method, OnlyOnLeader annotation, String name) {
		List<Problem> problems = new ArrayList<>();
		String maxAge = annotation.missedTickMaxAge();
		if (!maxAge.isEmpty() && parsePositive(maxAge) == null) {
			problems.add(new Problem("missedTickMaxAge \"" + maxAge + "\" of " + name + " is not a positive duration",
					"Give missedTickMaxAge of " + name + " a positive duration such as \"30m\" or \"PT30M\", or "
							+ "remove it to use leader-election.jobs.missed-tick-max-age."));
		}
		if (annotation.missedTicks() == MissedTickPolicy.RUN_ONCE && hasFixedDelay(method)) {
			problems.add(new Problem(
					name + " asks for missedTicks = RUN_ONCE but is scheduled with a fixed delay, which has no ticks "
							+ "to miss: each run is due a delay after the last one ended",
					"Remove missedTicks from @OnlyOnLeader on " + name + ", or schedule it with cron or fixedRate."));
		}
		return problems;
	}

	private static @Nullable Duration parsePositive(String value) {
		try {
			Duration duration = DurationStyle.detectAndParse(value);
			return (duration.isNegative() || duration.isZero()) ? null : duration;
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
	}

	private static boolean hasFixedDelay(Method method) {
		Set<Scheduled> schedules = AnnotatedElementUtils.getMergedRepeatableAnnotations(method, Scheduled.class,
				Schedules.class);
		return schedules.stream()
			.anyMatch((scheduled) -> scheduled.fixedDelay() >= 0 || !scheduled.fixedDelayString().isEmpty());
	}

	/**
	 * Something in an annotation that cannot apply, and how to fix it.
	 *
	 * @param problem what is wrong
	 * @param fix how to fix it
	 */
	public record Problem(String problem, String fix) {
	}

}
