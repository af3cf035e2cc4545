package io.github.leaderelection.aop;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.github.leaderelection.Leadership;
import io.github.leaderelection.RunOutcome;

/**
 * A run whose work goes on after its method returned (a subscription, a future): it ends
 * once, when the work ends, whatever thread says so, and a shutdown waits for that.
 */
abstract class DeferredRun implements LeaderOnlyRun {

	private final Leadership leadership;

	private final boolean interruptOnRevoke;

	private final AtomicBoolean ending = new AtomicBoolean();

	private final CountDownLatch ended = new CountDownLatch(1);

	private volatile Consumer<RunOutcome> onEnd = (outcome) -> {
	};

	DeferredRun(Leadership leadership, boolean interruptOnRevoke) {
		this.leadership = leadership;
		this.interruptOnRevoke = interruptOnRevoke;
	}

	/**
	 * What to do once the work has ended, such as forgetting the run and recording how it
	 * ended.
	 */
	void onEnd(Consumer<RunOutcome> action) {
		this.onEnd = action;
	}

	/**
	 * Called when the work has completed, failed or been cancelled; the first call
	 * counts.
	 * @param outcome how it ended
	 */
	void end(RunOutcome outcome) {
		if (this.ending.compareAndSet(false, true)) {
			// Forgotten before it counts as ended: whoever waited for it then finds it
			// gone.
			this.onEnd.accept(outcome);
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
