package io.github.leaderelection.aop;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.leaderelection.Leadership;

/**
 * A run whose work goes on after its method returned (a subscription, a future): it ends
 * once, when the work ends, whatever thread says so, and a shutdown waits for that.
 */
abstract class DeferredRun implements LeaderOnlyRun {

	private final Leadership leadership;

	private final boolean interruptOnRevoke;

	private final AtomicBoolean ending = new AtomicBoolean();

	private final CountDownLatch ended = new CountDownLatch(1);

	private volatile Runnable onEnd = () -> {
	};

	DeferredRun(Leadership leadership, boolean interruptOnRevoke) {
		this.leadership = leadership;
		this.interruptOnRevoke = interruptOnRevoke;
	}

	/** What to do once the work has ended, such as forgetting the run. */
	void onEnd(Runnable action) {
		this.onEnd = action;
	}

	/**
	 * Called when the work has completed, failed or been cancelled; the first call
	 * counts.
	 */
	void end() {
		if (this.ending.compareAndSet(false, true)) {
			// Forgotten before it counts as ended: whoever waited for it then finds it
			// gone.
			this.onEnd.run();
			this.ended.countDown();
		}
	}

	@Override
	public Leadership leadership() {
		return this.leadership;
	}

	@Override
	public boolean interruptOnRevoke() {
		return this.interruptOnRevoke;
	}

	@Override
	public boolean await(long deadline) {
		try {
			return this.ended.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

}
