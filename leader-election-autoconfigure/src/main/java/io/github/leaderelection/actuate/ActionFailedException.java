package io.github.leaderelection.actuate;

import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

import io.github.leaderelection.LeaderElectionException;
import org.jspecify.annotations.Nullable;

/**
 * An administrator's action on the {@code leaderelection} endpoint that did not happen,
 * or may not have: the kind says what an operator can do about it, and the web extension
 * turns it into an HTTP status.
 */
class ActionFailedException extends RuntimeException {

	/** Why the action failed, from the operator's side. */
	enum Kind {

		/**
		 * The request itself is wrong (no candidate id, an invalid one, an unknown
		 * action).
		 */
		BAD_REQUEST(400, false),

		/** This instance takes no part in the group. */
		UNKNOWN_GROUP(404, false),

		/**
		 * The state refused it, for example a candidate that takes no part in the group.
		 */
		REFUSED(409, false),

		/**
		 * The group had as many actions as the window allows; retry after the time given.
		 */
		TOO_MANY_ACTIONS(429, false),

		/**
		 * The store failed; the action may or may not have been applied before it did.
		 */
		STORE_UNAVAILABLE(503, true),

		/** The store did not answer in time; the action may still take effect. */
		STORE_TIMEOUT(504, true);

		private final int status;

		private final boolean mayStillTakeEffect;

		Kind(int status, boolean mayStillTakeEffect) {
			this.status = status;
			this.mayStillTakeEffect = mayStillTakeEffect;
		}

		int status() {
			return this.status;
		}

		boolean mayStillTakeEffect() {
			return this.mayStillTakeEffect;
		}

	}

	private final Kind kind;

	private final @Nullable Duration retryAfter;

	ActionFailedException(Kind kind, String message, Throwable cause) {
		super(message, cause);
		this.kind = kind;
		this.retryAfter = null;
	}

	ActionFailedException(Kind kind, String message) {
		super(message);
		this.kind = kind;
		this.retryAfter = null;
	}

	ActionFailedException(Kind kind, String message, Duration retryAfter) {
		super(message);
		this.kind = kind;
		this.retryAfter = retryAfter;
	}

	Kind kind() {
		return this.kind;
	}

	/** How long to wait before asking again, when the kind says to wait. */
	@Nullable Duration retryAfter() {
		return this.retryAfter;
	}

	/**
	 * Classifies what a store call of an action threw: a refusal by the store's state, a
	 * timeout, or another store failure.
	 */
	static ActionFailedException fromStore(String action, LeaderElectionException failure) {
		for (Throwable cause = failure.getCause(); cause != null; cause = cause.getCause()) {
			if (isTimeout(cause)) {
				return new ActionFailedException(Kind.STORE_TIMEOUT,
						failure.getMessage() + ". The store did not answer " + "in time, so the " + action
								+ " may still take effect: read the group again before retrying.",
						failure);
			}
		}
		// What the store itself threw: a store refuses an action the group's state does
		// not allow (such as a candidate that takes no part in it) with
		// IllegalStateException.
		Throwable thrown = failure.getCause();
		if (thrown instanceof IllegalStateException || thrown instanceof IllegalArgumentException) {
			return new ActionFailedException(Kind.REFUSED, failure.getMessage(), failure);
		}
		return new ActionFailedException(Kind.STORE_UNAVAILABLE, failure.getMessage() + ". The store failed, so the "
				+ action + " may or may not have taken effect: read the group again before retrying.", failure);
	}

	/**
	 * Every driver names its own timeout: the JDK's, JDBC's, and those of Lettuce and
	 * ZooKeeper, which all end with "TimeoutException".
	 */
	private static boolean isTimeout(Throwable cause) {
		return cause instanceof TimeoutException || cause instanceof SQLTimeoutException
				|| cause.getClass().getSimpleName().endsWith("TimeoutException");
	}

}
