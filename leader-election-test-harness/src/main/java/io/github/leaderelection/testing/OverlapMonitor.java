package io.github.leaderelection.testing;

import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Samples {@code isLeader()} of several candidates of one group, again and again, and
 * counts the samples in which more than one led throughout: the tests' check of "one
 * believer at a time".
 */
public final class OverlapMonitor implements AutoCloseable {

	/**
	 * Samples whose reads spread over more than this are not instants and are discarded.
	 */
	private static final long MAX_SAMPLE_NANOS = 20_000_000;

	/**
	 * Between samples: gentle on a small machine, whose cores the electors under test
	 * need too.
	 */
	private static final long PAUSE_NANOS = 20_000;

	private final List<BooleanSupplier> elections;

	private final AtomicInteger overlaps = new AtomicInteger();

	private final AtomicInteger samples = new AtomicInteger();

	private final Thread thread;

	private volatile boolean running = true;

	/**
	 * Starts sampling.
	 * @param <T> the type of the candidates
	 * @param candidates the candidates of one group
	 * @param isLeader whether a candidate leads (for an election, {@code isLeader()})
	 */
	public <T> OverlapMonitor(List<T> candidates, Predicate<T> isLeader) {
		this.elections = candidates.stream()
			.map((candidate) -> (BooleanSupplier) () -> isLeader.test(candidate))
			.toList();
		this.thread = new Thread(this::run, "overlap-monitor");
		this.thread.setDaemon(true);
		this.thread.start();
	}

	private void run() {
		int count = this.elections.size();
		boolean[] forward = new boolean[count];
		while (this.running) {
			long start = System.nanoTime();
			for (int i = 0; i < count; i++) {
				forward[i] = this.elections.get(i).getAsBoolean();
			}
			// Reads in sequence are not one instant: a handover can fall between two of
			// them. A candidate counts only if it still leads when read again after all
			// the others, in reverse order, so that it led throughout the window in which
			// they were read.
			int leaders = 0;
			for (int i = count - 1; i >= 0; i--) {
				if (forward[i] && this.elections.get(i).getAsBoolean()) {
					leaders++;
				}
			}
			if (System.nanoTime() - start < MAX_SAMPLE_NANOS) {
				this.samples.incrementAndGet();
				if (leaders > 1) {
					this.overlaps.incrementAndGet();
				}
			}
			LockSupport.parkNanos(PAUSE_NANOS);
		}
	}

	/** Samples in which more than one candidate led throughout. */
	public int overlaps() {
		return this.overlaps.get();
	}

	/** Samples taken. */
	public int samples() {
		return this.samples.get();
	}

	@Override
	public void close() throws InterruptedException {
		this.running = false;
		this.thread.join();
	}

}
