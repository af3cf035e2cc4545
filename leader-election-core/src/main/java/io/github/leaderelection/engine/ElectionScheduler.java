package io.github.leaderelection.engine;

import java.util.concurrent.Future;

/**
 * The time an engine reads and the threads its elections run on: the monotonic clock
 * against which every belief's deadline is checked, the timer that starts attempts and
 * deadline checks, and the executor of store calls.
 *
 * <p>
 * An engine runs on threads of its own unless its builder is given a scheduler
 * ({@link LeaderElectionEngine.Builder#scheduler}). Tests give it a
 * {@link VirtualElectionScheduler}, on which time passes only when the test says so and
 * every attempt runs on the test's thread; several engines may share one, as candidates
 * on several nodes share real time. An engine never shuts down a scheduler it was given:
 * once closed, it stops handing it work, and the tasks it left behind do nothing.
 *
 * <p>
 * An implementation must keep the engine's rules: {@link #nanoTime()} never goes back,
 * and it includes the time in which no task ran (a pause of the process), since a belief
 * ends at a deadline on this clock whether or not a thread was there to see it.
 */
public interface ElectionScheduler {

	/**
	 * The monotonic time in nanoseconds, as {@link System#nanoTime()}: only differences
	 * mean something.
	 */
	long nanoTime();

	/**
	 * Runs a task once, after a delay on this scheduler's clock. Must not run it on the
	 * caller's thread.
	 * @return a handle whose {@code cancel} keeps the task from running, if it has not
	 * started
	 */
	Future<?> schedule(Runnable task, long delayNanos);

	/**
	 * Runs a store task (an attempt, a watch) as soon as it can, never on the caller's
	 * thread: callers may hold locks that a store call must not be made under.
	 */
	void execute(Runnable task);

	/**
	 * Runs a store task that renews leases ahead of the store tasks waiting, as
	 * {@link #execute} otherwise: a leader's renewal must not queue behind a burst of
	 * releases and reads (a hand-over of many groups), or its belief reaches its deadline
	 * while the store answers well. By default, the same as {@link #execute}.
	 */
	default void executeFirst(Runnable task) {
		execute(task);
	}

}
