package io.github.leaderelection;

import org.jspecify.annotations.Nullable;

/**
 * Receives leadership changes of the groups of a {@link LeaderElectionRegistry}.
 *
 * <p>
 * Calls come from the engine's event threads, never from a thread that renews a lease: a
 * slow or throwing listener cannot delay a renewal. The changes of one group come one at
 * a time, in the order they happened; those of different groups may come at the same
 * time, on different threads, so a listener that keeps state across groups must be
 * thread-safe. A listener slow over one group delays only that group's later changes. By
 * the time {@link #revoked} is called, {@link LeaderElection#isLeader()} already answers
 * {@code false}.
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
