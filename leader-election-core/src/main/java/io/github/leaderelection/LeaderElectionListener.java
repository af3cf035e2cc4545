package io.github.leaderelection;

import org.jspecify.annotations.Nullable;

/**
 * Receives leadership changes of the groups of a {@link LeaderElectionRegistry}.
 *
 * <p>
 * Calls come from one notification thread, in the order the changes happened, never from
 * the thread that renews the lease: a slow or throwing listener cannot delay a renewal.
 * By the time {@link #revoked} is called, {@link LeaderElection#isLeader()} already
 * answers {@code false}.
 */
public interface LeaderElectionListener {

	/** This instance became leader. */
	default void granted(Leadership leadership) {
	}

	/** This instance stopped leading. */
	default void revoked(Leadership leadership, RevocationReason reason) {
	}

	/**
	 * The leader this instance observes for a group changed (including to or from
	 * itself).
	 * @param leader the new leader, or {@code null} when the group has no known leader
	 */
	default void leaderChanged(String group, @Nullable LeaderInfo leader) {
	}

}
