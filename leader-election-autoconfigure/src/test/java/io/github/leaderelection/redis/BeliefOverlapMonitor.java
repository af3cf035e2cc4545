package io.github.leaderelection.redis;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import io.github.leaderelection.LeaderElection;

/**
 * Samples {@code isLeader()} of the candidates of one group as fast as it can, and counts the
 * instants at which more than one of them believed it leads.
 */
final class BeliefOverlapMonitor implements AutoCloseable {

	/** A sample whose reads spread over more than this is not an instant and is discarded. */
	private static final long MAX_SAMPLE_NANOS = 5_000_000;

	private final List<LeaderElection> elections;

	private final AtomicInteger samples = new AtomicInteger();

	private final AtomicInteger overlaps = new AtomicInteger();

	private final Thread thread;

	private volatile boolean running = true;

	BeliefOverlapMonitor(List<LeaderElection> elections) {
		this.elections = List.copyOf(elections);
		this.thread = new Thread(this::sample, "belief-overlap-monitor");
		this.thread.setDaemon(true);
		this.thread.start();
	}

	private void sample() {
		while (this.running) {
			long start = System.nanoTime();
			int believers = 0;
			for (LeaderElection election : this.elections) {
				believers += election.isLeader() ? 1 : 0;
			}
			if (System.nanoTime() - start < MAX_SAMPLE_NANOS) {
				this.samples.incrementAndGet();
				if (believers > 1) {
					this.overlaps.incrementAndGet();
				}
			}
			// Gentle on a small machine: the electors under test need the cores too.
			LockSupport.parkNanos(20_000);
		}
	}

	int samples() {
		return this.samples.get();
	}

	int overlaps() {
		return this.overlaps.get();
	}

	@Override
	public void close() throws InterruptedException {
		this.running = false;
		this.thread.join();
	}

}
