package io.github.leaderelection.engine;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.leaderelection.LeaderElection;

/**
 * Samples {@code isLeader()} of several candidates of one group as fast as it can and counts the
 * samples in which more than one led throughout.
 */
class OverlapMonitor implements AutoCloseable {

	/** Samples whose reads spread over more than this are not instants and are discarded. */
	private static final long MAX_SAMPLE_NANOS = 20_000_000;

	private final List<? extends LeaderElection> elections;

	private final AtomicBoolean running = new AtomicBoolean(true);

	private final AtomicInteger overlaps = new AtomicInteger();

	private final AtomicInteger samples = new AtomicInteger();

	private final Thread thread;

	OverlapMonitor(List<? extends LeaderElection> elections) {
		this.elections = elections;
		this.thread = new Thread(this::run, "overlap-monitor");
		this.thread.setDaemon(true);
		this.thread.start();
	}

	private void run() {
		int count = this.elections.size();
		boolean[] forward = new boolean[count];
		while (this.running.get()) {
			long start = System.nanoTime();
			for (int i = 0; i < count; i++) {
				forward[i] = this.elections.get(i).isLeader();
			}
			// Reads in sequence are not one instant: a handover can fall between two of them. A
			// candidate counts only if it still leads when read again after all the others, in
			// reverse order, so that it led throughout the window in which they were read.
			int leaders = 0;
			for (int i = count - 1; i >= 0; i--) {
				if (forward[i] && this.elections.get(i).isLeader()) {
					leaders++;
				}
			}
			if (System.nanoTime() - start < MAX_SAMPLE_NANOS) {
				this.samples.incrementAndGet();
				if (leaders > 1) {
					this.overlaps.incrementAndGet();
				}
			}
			Thread.onSpinWait();
		}
	}

	int overlaps() {
		return this.overlaps.get();
	}

	int samples() {
		return this.samples.get();
	}

	@Override
	public void close() throws InterruptedException {
		this.running.set(false);
		this.thread.join();
	}

}
