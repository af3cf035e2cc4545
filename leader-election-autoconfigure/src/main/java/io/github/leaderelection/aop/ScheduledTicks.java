package io.github.leaderelection.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

import org.springframework.core.KotlinDetector;

/**
 * Hands the tick the scheduler fires to the gate of the scheduled method it calls, on the
 * same thread: the scheduler knows the tick, only the gate knows whether this instance
 * leads when the method starts (or, for a reactive method, when its work is subscribed
 * to, which Spring does on the scheduler's thread).
 */
public final class ScheduledTicks {

	private static final ThreadLocal<@Nullable JobTick> current = new ThreadLocal<>();

	private ScheduledTicks() {
	}

	/**
	 * Runs a scheduled task with its tick current on this thread.
	 * @param tick the tick
	 * @param task the task, which calls the scheduled method
	 */
	public static void fire(JobTick tick, Runnable task) {
		JobTick outer = current.get();
		current.set(tick);
		try {
			task.run();
		}
		finally {
			current.set(outer);
		}
	}

	/**
	 * Takes the tick fired on this thread for the method, if any: the first gated call of
	 * that method claims it, no later call does.
	 */
	static @Nullable JobTick take(Method method) {
		JobTick tick = current.get();
		if (tick == null || !tick.methodName().equals(method.getName()) || !takesNoArguments(method)) {
			return null;
		}
		current.remove();
		return tick;
	}

	/** A suspending function's only parameter is the continuation its caller passes. */
	private static boolean takesNoArguments(Method method) {
		return method.getParameterCount() == 0
				|| (method.getParameterCount() == 1 && KotlinDetector.isSuspendingFunction(method));
	}

}
