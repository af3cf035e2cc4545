package io.github.leaderelection.engine;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.PriorityBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The store threads an engine makes for itself, for an {@link ElectionScheduler} of one's
 * own that wants the same: a fixed number of threads whose queue puts the tasks that
 * renew leases first ({@link ElectionScheduler#executeFirst}), each kind in the order
 * submitted. A renewal still waits for the store calls already on their way.
 */
public final class StoreThreads {

	private final ThreadPoolExecutor executor;

	private final AtomicLong submitted = new AtomicLong();

	/**
	 * @param threads how many store calls may be on their way at once
	 * @param threadFactory makes the threads
	 */
	public StoreThreads(int threads, ThreadFactory threadFactory) {
		this.executor = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS,
				new PriorityBlockingQueue<>(), threadFactory);
	}

	/** Runs a store task after the renewals waiting and the tasks submitted before it. */
	public void execute(Runnable task) {
		this.executor.execute(new Task(task, false, this.submitted.incrementAndGet()));
	}

	/** Runs a store task that renews leases ahead of every other task waiting. */
	public void executeFirst(Runnable task) {
		this.executor.execute(new Task(task, true, this.submitted.incrementAndGet()));
	}

	/**
	 * Stops the threads: the tasks waiting do not run, and those running are interrupted.
	 */
	public void shutdownNow() {
		this.executor.shutdownNow();
	}

	/**
	 * The threads, for the engine to wait for; not for tasks of one's own, which the
	 * queue cannot order.
	 */
	ExecutorService executor() {
		return this.executor;
	}

	/** Renewals first, then in the order submitted. */
	private record Task(Runnable task, boolean first, long sequence) implements Runnable, Comparable<Task> {

		@Override
		public void run() {
			this.task.run();
		}

		@Override
		public int compareTo(Task other) {
			if (this.first != other.first) {
				return this.first ? -1 : 1;
			}
			return Long.compare(this.sequence, other.sequence);
		}

	}

}
