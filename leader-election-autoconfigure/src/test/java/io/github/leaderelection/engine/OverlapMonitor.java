package io.github.leaderelection.engine;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.leaderelection.LeaderElection;

/**
 * Samples {@code isLeader()} of several candidates of one group as fast as it can and counts the
 * instants at which more than one said yes.
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
		while (this.running.get()) {
			long start = System.nanoTime();
			int leaders = 0;
			for (LeaderElection election : this.elections) {
				if (election.isLeader()) {
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
