package io.github.leaderelection.engine;

import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An engine's own timer and store threads: its scheduler unless it was given one. The
 * engine shuts them down when it closes.
 */
final class OwnThreads implements ElectionScheduler {

	final ScheduledThreadPoolExecutor timer;

	final StoreThreads store;

	OwnThreads(int storeThreads) {
		this.timer = new ScheduledThreadPoolExecutor(1, named("leader-election-timer"));
		this.timer.setRemoveOnCancelPolicy(true);
		this.store = new StoreThreads(storeThreads, named("leader-election-store"));
	}

	@Override
	public long nanoTime() {
		return System.nanoTime();
	}

	@Override
	public Future<?> schedule(Runnable task, long delayNanos) {
		return this.timer.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
	}

	@Override
	public void execute(Runnable task) {
		this.store.execute(task);
	}

	@Override
	public void executeFirst(Runnable task) {
		this.store.executeFirst(task);
	}

	/**
	 * Daemon threads named with the prefix and a number: an engine never holds up exit.
	 */
	static ThreadFactory named(String prefix) {
		AtomicInteger count = new AtomicInteger();
		return (runnable) -> {
			Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
	}

}
