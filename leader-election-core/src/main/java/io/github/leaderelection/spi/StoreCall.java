package io.github.leaderelection.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.leaderelection.LeaderElectionException;
import org.jspecify.annotations.Nullable;

/**
 * One operation of a store, within the one timeout the engine gave it, and the one
 * wording of its failures that every store uses: "Could not renew the lease of group
 * 'orders' in etcd: ...", "... within the call's timeout", "Interrupted while trying to
 * ...". An operation of several requests takes what is left of the timeout for each, so
 * that the whole returns or fails within it.
 *
 * <pre class="code">
 * StoreCall call = StoreCall.start("renew the lease of group 'orders'", "in etcd", timeout);
 * TxnResponse answer = call.await(kv.txn()...commit());
 * </pre>
 */
public final class StoreCall {

	private final String action;

	private final String where;

	private final long deadline;

	private StoreCall(String action, String where, long deadline) {
		this.action = action;
		this.where = where;
		this.deadline = deadline;
	}

	/**
	 * Starts an operation now.
	 * @param action what it does, as it reads after "Could not": {@code "renew the lease
	 * of group 'orders'"}
	 * @param where where it does it, for messages: {@code "in etcd"},
	 * {@code "in table leader_election"}
	 * @param timeout the time it has
	 */
	public static StoreCall start(String action, String where, Duration timeout) {
		Objects.requireNonNull(action, "action");
		Objects.requireNonNull(where, "where");
		return new StoreCall(action, where, System.nanoTime() + Math.max(1, timeout.toNanos()));
	}

	/** When the time is up, on the {@link System#nanoTime()} clock. */
	public long deadline() {
		return this.deadline;
	}

	/** Whether the time is up. */
	public boolean isOver() {
		return this.deadline - System.nanoTime() <= 0;
	}

	/**
	 * What is left of the time, for the operation's next request.
	 * @throws LeaderElectionException if nothing is left
	 */
	public Duration remaining() {
		long left = this.deadline - System.nanoTime();
		if (left <= 0) {
			throw timedOut(null);
		}
		return Duration.ofNanos(left);
	}

	/**
	 * Waits for an answer until the time is up; gives up on it (cancels it) when the time
	 * is up or the thread is interrupted.
	 * @throws LeaderElectionException if the time is up, the thread was interrupted, or
	 * the answer is a failure
	 */
	public <T> T await(Future<T> answer) {
		try {
			return answer.get(Math.max(0, this.deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			answer.cancel(true);
			throw timedOut(ex);
		}
		catch (InterruptedException ex) {
			answer.cancel(true);
			throw interrupted(ex);
		}
		catch (ExecutionException ex) {
			throw failed((ex.getCause() != null) ? ex.getCause() : ex);
		}
	}

	/** The operation failed: "Could not (action) (where): (the cause's message)". */
	public LeaderElectionException failed(Throwable cause) {
		if (cause instanceof LeaderElectionException election) {
			return election;
		}
		return new LeaderElectionException("Could not " + this.action + " " + this.where + ": " + cause.getMessage(),
				cause);
	}

	/** The time was up: "Could not (action) (where) within the call's timeout". */
	public LeaderElectionException timedOut(@Nullable Throwable cause) {
		String message = "Could not " + this.action + " " + this.where + " within the call's timeout";
		return (cause != null) ? new LeaderElectionException(message, cause) : new LeaderElectionException(message);
	}

	/**
	 * The thread was interrupted while it waited: restores its interrupt status, for
	 * whoever interrupted it, and says what was given up.
	 */
	public LeaderElectionException interrupted(InterruptedException cause) {
		Thread.currentThread().interrupt();
		return new LeaderElectionException("Interrupted while trying to " + this.action + " " + this.where, cause);
	}

}
