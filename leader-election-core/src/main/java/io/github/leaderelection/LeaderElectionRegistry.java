package io.github.leaderelection;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
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

	/**
	 * Joins every partition of a partitioned group ({@link Partitions}): the groups
	 * {@code name/0} to {@code name/(count - 1)}.
	 * @return the partitions' elections, in partition order
	 */
	default List<LeaderElection> joinPartitions(String name, int count) {
		if (count < 1) {
			throw new IllegalArgumentException(
					"A partitioned group needs at least 1 partition, but '" + name + "' has " + count);
		}
		List<LeaderElection> partitions = new ArrayList<>(count);
		for (int partition = 0; partition < count; partition++) {
			partitions.add(join(Partitions.group(name, partition)));
		}
		return partitions;
	}

	/**
	 * The partitions of a partitioned group that this instance owns (leads) now, each
	 * with its leadership, whose term fences the partition's work; see
	 * {@link Partitions#owned}.
	 */
	default Map<Integer, Leadership> ownedPartitions(String name) {
		return Partitions.owned(this, name);
	}

	/** Adds a listener for every group, present and future. */
	void addListener(LeaderElectionListener listener);

}
