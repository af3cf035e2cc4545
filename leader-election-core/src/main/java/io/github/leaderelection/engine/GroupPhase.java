package io.github.leaderelection.engine;

/**
 * Where one group's election stands on this instance. CONTRIBUTING.md draws how it moves
 * from one phase to the next.
 */
public enum GroupPhase {

	/** Joined, and not started yet. */
	NOT_STARTED,

	/** Competing, without a lease: the group is led by another candidate, or free. */
	FOLLOWING,

	/**
	 * Competing, after giving a lease up (a yield, a leadership ended by store trouble),
	 * but leaving the next try to the other candidates for a while.
	 */
	STAYING_OUT,

	/**
	 * Not competing: another live process uses this candidate id (see the status's
	 * conflict), until its lease is gone.
	 */
	STANDING_ASIDE,

	/**
	 * Holding a lease taken over from a holder whose lease had not run out yet: waiting
	 * it out before leading.
	 */
	PENDING,

	/** Leading: believes it holds the lease, until a deadline that renewals push on. */
	LEADING,

	/**
	 * No longer leading (the store refused a renewal, or the belief's deadline passed),
	 * and the revocation, with its reason, is on its way.
	 */
	LOSING,

	/** Giving a lease up that it no longer acts on: a yield, a hand-over, a deadline. */
	RELEASING,

	/** Stopped, with the engine. */
	STOPPED

}
