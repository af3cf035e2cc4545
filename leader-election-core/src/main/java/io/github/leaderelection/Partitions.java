package io.github.leaderelection;

import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;

/**
 * A partitioned group: work split into a fixed number of partitions, each elected as a
 * group of its own, so that with balancing on each instance owns its share of them (the
 * task table of seed 003, split by key). Partition {@code i} of {@code orders} is the
 * group {@code orders/i}; its leadership's term fences the work done for it.
 *
 * <pre class="code">
 * registry.joinPartitions("orders", 64);
 * ...
 * Map&lt;Integer, Leadership&gt; mine = Partitions.owned(registry, "orders");
 * mine.forEach((partition, leadership) -&gt; dispatch(partition, leadership.term()));
 * </pre>
 */
public final class Partitions {

	private static final char SEPARATOR = '/';

	private Partitions() {
	}

	/** The group of one partition. */
	public static String group(String name, int partition) {
		if (partition < 0) {
			throw new IllegalArgumentException("partition must not be negative but is " + partition);
		}
		return name + SEPARATOR + partition;
	}

	/** The partition a group is, if it is one of {@code name}'s. */
	public static OptionalInt partitionOf(String name, String group) {
		if (group.length() <= name.length() + 1 || !group.startsWith(name)
				|| group.charAt(name.length()) != SEPARATOR) {
			return OptionalInt.empty();
		}
		String number = group.substring(name.length() + 1);
		if (!number.chars().allMatch(Character::isDigit) || number.length() > 9
				|| (number.length() > 1 && number.charAt(0) == '0')) {
			return OptionalInt.empty();
		}
		return OptionalInt.of(Integer.parseInt(number));
	}

	/**
	 * The partitions of {@code name} that this instance leads now, each with its
	 * leadership (whose term fences the partition's work), in partition order. No I/O: as
	 * current as {@link LeaderElection#isLeader()}.
	 */
	public static Map<Integer, Leadership> owned(LeaderElectionRegistry registry, String name) {
		Map<Integer, Leadership> owned = new TreeMap<>();
		for (LeaderElection election : registry.elections()) {
			OptionalInt partition = partitionOf(name, election.group());
			if (partition.isPresent()) {
				election.leadership().ifPresent((leadership) -> owned.put(partition.getAsInt(), leadership));
			}
		}
		return owned;
	}

}
