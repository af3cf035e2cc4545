package io.github.leaderelection;

/**
 * Why this instance stopped leading.
 */
public enum RevocationReason {

	/** This instance gave leadership up ({@link LeaderElection#yieldLeadership()}). */
	YIELDED,

	/**
	 * The lease was lost: a renewal found another holder or term, or the local deadline
	 * passed (for example after a process pause) without a successful renewal.
	 */
	LEASE_LOST,

	/** Renewals failed with store errors until the renew deadline passed. */
	STORE_ERROR,

	/** An administrator made another candidate leader, or forced a re-election. */
	FORCED_ELSEWHERE,

	/** The election is shutting down. */
	SHUTDOWN,

	/**
	 * Balancing handed the group over: this instance led more groups than its share, and
	 * a candidate that leads fewer than its share takes this one.
	 */
	REBALANCED

}
