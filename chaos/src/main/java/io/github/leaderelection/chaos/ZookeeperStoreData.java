package io.github.leaderelection.chaos;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The election's nodes in ZooKeeper, under the nodes' base path {@value #BASE}: a node
 * per group whose data is the last grant (lines: format version, term, lease and quiet
 * milliseconds, queue node, holder's session, holder; see {@code Grant} in the ZooKeeper
 * store), with the candidates' ephemeral queue nodes below it, the live candidates under
 * {@code .candidates}, and an ephemeral {@code .session-<id>} node per store session.
 */
final class ZookeeperStoreData implements StoreData {

	/** The base path the nodes give their store (see {@code ChaosNode}). */
	static final String BASE = "/chaos";

	private static final int WIPE_ATTEMPTS = 10;

	private final String connectString;

	private CuratorFramework client;

	ZookeeperStoreData(String connectString) {
		this.connectString = connectString;
	}

	/**
	 * The persistent nodes and their data. Ephemeral nodes belong to their sessions,
	 * which no copy can bring back.
	 */
	@Override
	public Copy copy() throws Exception {
		Map<String, byte[]> nodes = new TreeMap<>();
		if (client().checkExists().forPath(BASE) != null) {
			collect(BASE, nodes);
		}
		return new Nodes(nodes);
	}

	private void collect(String path, Map<String, byte[]> nodes) throws Exception {
		Stat stat = new Stat();
		byte[] data;
		List<String> children;
		try {
			data = client().getData().storingStatIn(stat).forPath(path);
			children = client().getChildren().forPath(path);
		}
		catch (KeeperException.NoNodeException ex) {
			return; // gone meanwhile: an ephemeral node of a candidate that left
		}
		if (stat.getEphemeralOwner() == 0) {
			nodes.put(path, (data != null) ? data : new byte[0]);
			for (String child : children) {
				collect(path + "/" + child, nodes);
			}
		}
	}

	/**
	 * Writes the copy's data back over the persistent nodes, creating those deleted
	 * since; the candidates' ephemeral queue nodes stay as they are.
	 */
	@Override
	public String restore(Copy copy) throws Exception {
		Map<String, byte[]> nodes = ((Nodes) copy).nodes();
		int created = 0;
		for (Map.Entry<String, byte[]> node : nodes.entrySet()) {
			if (client().checkExists().forPath(node.getKey()) != null) {
				client().setData().forPath(node.getKey(), node.getValue());
			}
			else {
				client().create().creatingParentsIfNeeded().forPath(node.getKey(), node.getValue());
				created++;
			}
		}
		return "restored-" + nodes.size() + "-nodes-" + created + "-created";
	}

	/**
	 * With {@code leaseToo}, deletes the group's node with the queue below it; else
	 * empties its data, the record of the last grant, and keeps the queue.
	 */
	@Override
	public String deleteGroup(String group, boolean leaseToo) throws Exception {
		String path = BASE + "/" + group;
		try {
			if (leaseToo) {
				client().delete().deletingChildrenIfNeeded().forPath(path);
				return "deleted-node-and-queue-of-" + group;
			}
			client().setData().forPath(path, new byte[0]);
			return "emptied-record-of-" + group;
		}
		catch (KeeperException.NoNodeException ex) {
			return "no-node-of-" + group;
		}
	}

	/**
	 * Deletes every node under the base path, and the base path, in one multi-operation:
	 * a loss at one instant. A recursive delete node by node never ends while a hundred
	 * groups' candidates queue again as fast as their nodes go; a multi that finds the
	 * tree changed since it was listed is tried again on a new listing.
	 */
	@Override
	public String wipe(boolean drastic) throws Exception {
		for (int attempt = 1; attempt <= WIPE_ATTEMPTS; attempt++) {
			List<String> paths = new ArrayList<>();
			listChildrenFirst(BASE, paths);
			if (paths.isEmpty()) {
				return "no-" + BASE;
			}
			List<CuratorOp> deletes = new ArrayList<>();
			for (String path : paths) {
				deletes.add(client().transactionOp().delete().forPath(path));
			}
			try {
				client().transaction().forOperations(deletes);
				return "deleted-" + paths.size() + "-nodes-at-once" + ((attempt > 1) ? "-attempt-" + attempt : "");
			}
			catch (KeeperException.NotEmptyException | KeeperException.NoNodeException ex) {
				// Changed since listed: list again.
			}
		}
		throw new IllegalStateException(
				"The nodes under " + BASE + " changed under every one of " + WIPE_ATTEMPTS + " wipes");
	}

	private void listChildrenFirst(String path, List<String> paths) throws Exception {
		List<String> children;
		try {
			children = client().getChildren().forPath(path);
		}
		catch (KeeperException.NoNodeException ex) {
			return;
		}
		for (String child : children) {
			listChildrenFirst(path + "/" + child, paths);
		}
		paths.add(path);
	}

	@Override
	public String lowerTerm(String group, long by) throws Exception {
		String path = BASE + "/" + group;
		Stat stat = new Stat();
		byte[] data;
		try {
			data = client().getData().storingStatIn(stat).forPath(path);
		}
		catch (KeeperException.NoNodeException ex) {
			return "no-node-of-" + group;
		}
		String[] fields = new String((data != null) ? data : new byte[0], StandardCharsets.UTF_8).split("\n", -1);
		if (fields.length < 2) {
			return "no-term-of-" + group;
		}
		long term = Long.parseLong(fields[1]);
		long lowered = Math.max(0, term - by);
		fields[1] = Long.toString(lowered);
		try {
			// Over the version read: a grant in between keeps its term.
			client().setData()
				.withVersion(stat.getVersion())
				.forPath(path, String.join("\n", fields).getBytes(StandardCharsets.UTF_8));
		}
		catch (KeeperException.BadVersionException ex) {
			return "term-of-" + group + "-changed-meanwhile";
		}
		return "term-of-" + group + "-from-" + term + "-to-" + lowered;
	}

	/**
	 * One client for the run, connected on first use: it reconnects by itself after a
	 * restart of the server.
	 */
	private CuratorFramework client() throws InterruptedException {
		if (this.client == null) {
			this.client = CuratorFrameworkFactory.builder()
				.connectString(this.connectString)
				.sessionTimeoutMs(10_000)
				.connectionTimeoutMs(2000)
				.retryPolicy(new ExponentialBackoffRetry(100, 5, 1000))
				.ensembleTracker(false)
				.build();
			this.client.start();
			if (!this.client.blockUntilConnected(10, TimeUnit.SECONDS)) {
				throw new IllegalStateException("Could not connect to ZooKeeper at " + this.connectString);
			}
		}
		return this.client;
	}

	/** Starts the client on first use; it connects by itself from then on. */
	@Override
	public void connect() throws Exception {
		client();
	}

	@Override
	public void close() {
		if (this.client != null) {
			this.client.close();
		}
	}

	private record Nodes(Map<String, byte[]> nodes) implements Copy {

		@Override
		public int size() {
			return this.nodes.size();
		}

	}

}
