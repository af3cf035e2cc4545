package io.github.leaderelection.zookeeper;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * Reads many groups with read-only multi-operations: each group's data, then its queue,
 * as a single read does, so that a grant made in between changes the version that every
 * write checks.
 *
 * <p>
 * A request's size is easy to know, its answer's is not: a group's queue holds a node of
 * about 60 bytes per candidate, and an answer larger than the client accepts
 * ({@code jute.maxbuffer}) is not refused but drops the connection, which suspends every
 * lease of the node. So the groups are split by the answer to expect for one, which is
 * the largest of the last batch (a group read alone only raises it), at least
 * {@link #MIN_GROUP_BYTES}, within half a packet ({@link CuratorCalls#batchBytes}): a
 * queue may grow to twice what was last seen before a batch is too large. A batch that
 * lost the connection doubles what is expected, so that the next one is split finer
 * instead of failing again.
 */
final class GroupReads {

	/** The least answer to expect for a group: its grant and about ten candidates. */
	static final int MIN_GROUP_BYTES = 1024;

	private final CuratorCalls zookeeper;

	private final GroupPaths paths;

	private volatile int groupBytes = MIN_GROUP_BYTES;

	GroupReads(CuratorCalls zookeeper, GroupPaths paths) {
		this.zookeeper = zookeeper;
		this.paths = paths;
	}

	/**
	 * Reads the groups, with one request for all of them while their answers fit in half
	 * a packet, otherwise with several sent at once.
	 * @return the view of each group, null for a group that does not exist
	 */
	Map<String, @Nullable GroupView> read(Collection<String> groups, long deadline) throws Exception {
		Map<String, @Nullable String> noNodes = new LinkedHashMap<>();
		groups.forEach((group) -> noNodes.put(Objects.requireNonNull(group, "group"), null));
		Map<String, @Nullable GroupView> views = new LinkedHashMap<>();
		readWithNodes(noNodes, deadline).forEach((group, read) -> views.put(group, read.view()));
		return views;
	}

	/**
	 * Reads the groups as {@link #read} does and, in the same requests, a queue node of
	 * each group that names one, whose stat tells the session that owns it.
	 * @param nodes the queue node to read of each group, by group; null for none
	 * @return what was read of each group, in the order given
	 */
	Map<String, Read> readWithNodes(Map<String, @Nullable String> nodes, long deadline) throws Exception {
		List<Op> reads = new ArrayList<>();
		for (Map.Entry<String, @Nullable String> entry : nodes.entrySet()) {
			String path = this.paths.group(entry.getKey());
			reads.add(this.zookeeper.readData(path));
			reads.add(this.zookeeper.readChildren(path));
			if (entry.getValue() != null) {
				reads.add(this.zookeeper.readData(this.paths.node(entry.getKey(), entry.getValue())));
			}
		}
		// A queue node's answer is its stat and the candidate id, within 256 bytes.
		boolean withNodes = reads.size() > 2 * nodes.size();
		int expected = this.groupBytes;
		int perGroup = withNodes ? expected + 256 : expected;
		List<OpResult> results;
		try {
			results = this.zookeeper.read(reads,
					(withNodes ? 3 : 2) * Math.max(1, this.zookeeper.batchBytes() / perGroup), deadline);
		}
		catch (KeeperException.ConnectionLossException ex) {
			this.groupBytes = (int) Math.min(Integer.MAX_VALUE, 2L * expected);
			throw ex;
		}
		Map<String, Read> views = new LinkedHashMap<>();
		int largest = MIN_GROUP_BYTES;
		int index = 0;
		for (Map.Entry<String, @Nullable String> entry : nodes.entrySet()) {
			OpResult data = results.get(index++);
			OpResult children = results.get(index++);
			OpResult node = (entry.getValue() != null) ? results.get(index++) : null;
			GroupView view = null;
			if (data instanceof OpResult.GetDataResult grant && children instanceof OpResult.GetChildrenResult queue) {
				largest = Math.max(largest, bytes(grant.getData(), queue.getChildren()));
				view = GroupView.of(grant.getData(), grant.getStat(), queue.getChildren());
			}
			Stat stat = (node instanceof OpResult.GetDataResult found) ? found.getStat() : null;
			views.put(entry.getKey(), new Read(view, entry.getValue(), stat));
		}
		// A group read alone says little of the others: it only raises what is expected.
		this.groupBytes = (nodes.size() > 1) ? largest : Math.max(this.groupBytes, largest);
		return views;
	}

	/**
	 * The answer to reading a group in a batch: two results (9 bytes of header each), the
	 * data with its length and a stat (68 bytes), the children with their lengths.
	 */
	private static int bytes(byte @Nullable [] data, List<String> children) {
		int bytes = 100 + ((data != null) ? data.length : 0);
		for (String child : children) {
			bytes += 4 + child.length();
		}
		return bytes;
	}

	/**
	 * What was read of a group.
	 *
	 * @param view the group, or null if it does not exist
	 * @param node the queue node read with it, or null for none
	 * @param nodeStat that node's stat, or null if it is gone or none was read
	 */
	record Read(@Nullable GroupView view, @Nullable String node, @Nullable Stat nodeStat) {

	}

}
