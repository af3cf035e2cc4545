package io.github.leaderelection.chaos;

import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.leaderelection.engine.ElectionScheduler;
import io.github.leaderelection.engine.StoreThreads;

/**
 * The engine's threads as it makes them itself (one timer, two store threads that run
 * renewals first), on a monotonic clock that can run at another rate than real time: a
 * node whose clock is skewed against the store's, without touching the real clock that
 * the records are stamped with (libfaketime would move both). The clock is real time
 * scaled piece by piece: it never goes back and never jumps, whatever rate is set; it may
 * read a little ahead of the pieces (never behind), which only ends a belief sooner.
 */
final class SkewableScheduler implements ElectionScheduler {

	/** A node exits with its harness: nothing here keeps it alive. */
	private static final ThreadFactory DAEMONS = (runnable) -> {
		Thread thread = Executors.defaultThreadFactory().newThread(runnable);
		thread.setDaemon(true);
		return thread;
	};

	private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(DAEMONS);

	private final StoreThreads store = new StoreThreads(2, DAEMONS);

	/** Real time and skewed time when the rate last changed, and the rate since. */
	private record Segment(long realStart, long skewedStart, double rate) {

		long skewed(long real) {
			return this.skewedStart + (long) ((real - this.realStart) * this.rate);
		}

	}

	private volatile Segment segment;

	/**
	 * The latest reading handed out: a reader on the old rate may have read a little
	 * ahead of where the new one starts.
	 */
	private final AtomicLong latest = new AtomicLong(Long.MIN_VALUE);

	SkewableScheduler() {
		long now = System.nanoTime();
		this.segment = new Segment(now, now, 1.0);
	}

	/**
	 * Runs the clock at a rate from now on.
	 * @return the real time at which the new rate took effect
	 */
	synchronized long rate(double rate) {
		long now = System.nanoTime();
		Segment current = this.segment;
		this.segment = new Segment(now, current.skewed(now), rate);
		return now;
	}

	double rate() {
		return this.segment.rate();
	}

	@Override
	public long nanoTime() {
		long now = this.segment.skewed(System.nanoTime());
		return this.latest.accumulateAndGet(now, Math::max);
	}

	/**
	 * Waits the delay on this clock at its current rate; a rate set later does not move
	 * the task, which the engine allows for: its deadline checks compare the clock when
	 * they run, and {@code isLeader()} compares it at call time.
	 */
	@Override
	public Future<?> schedule(Runnable task, long delayNanos) {
		return this.timer.schedule(task, (long) Math.ceil(delayNanos / this.segment.rate()), TimeUnit.NANOSECONDS);
	}

	@Override
	public void execute(Runnable task) {
		this.store.execute(task);
	}

	@Override
	public void executeFirst(Runnable task) {
		this.store.executeFirst(task);
	}

}
