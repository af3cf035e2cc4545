package io.github.leaderelection.actuate;

import java.util.List;
import java.util.Optional;

/**
 * Tells which candidates take part in a group, for stores that know them (such as
 * ZooKeeper, where each candidate has a node). When a bean of this type exists, the
 * {@code leaderelection} endpoint lists the participants of each group and refuses to
 * force a candidate that is not one of them. A {@code LeaseStore} bean may implement it.
 */
@FunctionalInterface
public interface LeaderElectionParticipants {

	/**
	 * The candidate ids taking part in a group, in the store's order.
	 * @param group the group
	 * @return the candidate ids, or empty when the store cannot tell
	 */
	Optional<List<String>> participants(String group);

}
