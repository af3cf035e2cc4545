package io.github.leaderelection.aop;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.leaderelection.Leadership;

/**
 * The work of a leader-only method that returned a {@link CompletionStage} still under
 * way, from the method's return until the stage completes: a revocation cancels it (where
 * the method asks for interruption and the stage is a {@link Future}), a shutdown waits
 * for it.
 */
final class PendingResult implements LeaderOnlyRun {

	private final Leadership leadership;

	private final boolean interruptOnRevoke;

	private final CompletionStage<?> stage;

	private final CountDownLatch completed = new CountDownLatch(1);

	private final String method;

	PendingResult(Leadership leadership, boolean interruptOnRevoke, CompletionStage<?> stage, String method) {
		this.leadership = leadership;
		this.interruptOnRevoke = interruptOnRevoke;
		this.stage = stage;
		this.method = method;
	}

	/**
	 * Runs the action once the stage has completed (at once if it has), then counts the
	 * work as ended.
	 */
	void whenCompleted(Runnable action) {
		this.stage.whenComplete((result, failure) -> {
			action.run();
			this.completed.countDown();
		});
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
	public void interrupt() {
		if (this.stage instanceof Future<?> future) {
			future.cancel(true);
		}
	}

	@Override
	public boolean await(long deadline) {
		try {
			return this.completed.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	@Override
	public String where() {
		return "in the result " + this.method + " returned";
	}

}
