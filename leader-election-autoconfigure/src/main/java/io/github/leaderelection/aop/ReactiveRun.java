package io.github.leaderelection.aop;

import java.util.concurrent.CompletableFuture;

import io.github.leaderelection.Leadership;
import org.jspecify.annotations.Nullable;

/**
 * One subscription to the work of a reactive leader-only method, from the moment the gate
 * let it start until the work completes, fails or is cancelled. A revocation that asks
 * for interruption completes {@link #revoked()}, which cancels the work and completes the
 * subscriber.
 */
final class ReactiveRun extends DeferredRun {

	private final Work work;

	private final CompletableFuture<Void> revoked = new CompletableFuture<>();

	private final String method;

	/**
	 * @param leadership the leadership the subscription started under
	 * @param interruptOnRevoke whether a revocation cancels the work
	 * @param work calls the method, which returns the publisher of the work
	 * @param method the method, for log lines
	 */
	ReactiveRun(Leadership leadership, boolean interruptOnRevoke, Work work, String method) {
		super(leadership, interruptOnRevoke);
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

	@Override
	public void interrupt() {
		this.revoked.complete(null);
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
