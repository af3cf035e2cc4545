package io.github.leaderelection.aop;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.leaderelection.Leadership;
import org.jspecify.annotations.Nullable;

/**
 * One subscription to the work of a reactive leader-only method, from the moment the gate
 * let it start until the work completes, fails or is cancelled. A revocation that asks
 * for interruption completes {@link #revoked()}, which cancels the work and completes the
 * subscriber.
 */
final class ReactiveRun implements LeaderOnlyRun {

	private final Leadership leadership;

	private final boolean interruptOnRevoke;

	private final Work work;

	private final CompletableFuture<Void> revoked = new CompletableFuture<>();

	private final AtomicBoolean ending = new AtomicBoolean();

	private final CountDownLatch ended = new CountDownLatch(1);

	private final String method;

	private volatile Runnable onEnd = () -> {
	};

	/**
	 * @param leadership the leadership the subscription started under
	 * @param interruptOnRevoke whether a revocation cancels the work
	 * @param work calls the method, which returns the publisher of the work
	 * @param method the method, for log lines
	 */
	ReactiveRun(Leadership leadership, boolean interruptOnRevoke, Work work, String method) {
		this.leadership = leadership;
		this.interruptOnRevoke = interruptOnRevoke;
		this.work = work;
		this.method = method;
	}

	/** Calls the method; what it returns is the work to subscribe to. */
	@Nullable Object callMethod() throws Throwable {
		return this.work.call();
	}

	/** Completes when a revocation stops the work. */
	CompletableFuture<Void> revoked() {
		return this.revoked;
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
	public void interrupt() {
		this.revoked.complete(null);
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

	@Override
	public String where() {
		return "in a subscription to " + this.method;
	}

	/** A call of the method, which may throw what the method throws. */
	@FunctionalInterface
	interface Work {

		@Nullable Object call() throws Throwable;

	}

}
