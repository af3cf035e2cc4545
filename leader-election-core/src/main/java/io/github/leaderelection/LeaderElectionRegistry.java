package io.github.leaderelection;

import java.util.Collection;
import java.util.Optional;

/**
 * All the election groups one application takes part in, under one candidate id.
 */
public interface LeaderElectionRegistry {

	/** This instance's candidate id, the same in every group. */
	String candidateId();

	/**
	 * Joins a group (if not joined yet) and returns its election. Joining is allowed at
	 * any time; a running registry starts competing for the group at once.
	 * @throws IllegalArgumentException if the group name is blank, longer than 255
	 * characters or contains control characters
	 */
	LeaderElection join(String group);

	/** The election of a group this instance has joined. */
	Optional<LeaderElection> find(String group);

	/** Every group joined so far. */
	Collection<LeaderElection> elections();

	/** Adds a listener for every group, present and future. */
	void addListener(LeaderElectionListener listener);

}
