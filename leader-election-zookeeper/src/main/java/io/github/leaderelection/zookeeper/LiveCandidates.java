package io.github.leaderelection.zookeeper;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.github.leaderelection.spi.KeyedLocks;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The list of live candidates that balancing reads: an ephemeral node per candidate,
 * {@code <basePath>/.candidates/<candidate id, percent-encoded>@<weight>}, holding the
 * candidate id. ZooKeeper deletes it when the session of the store that created it ends:
 * a session timeout after that client's last contact, by the servers' clock, or at once
 * when the client closes. So an entry lasts as long as its session, not a time to live.
 *
 * <p>
 * The weight is in the node's name rather than its data so that one getChildren lists
 * every candidate with its weight: one request per call, however many candidates come, go
 * or change weight. Weights in the data would cost a read of every candidate not seen
 * before, and could not be cached, since a getChildren does not tell that a known
 * candidate's data changed. A new weight replaces the node: the old one is deleted and
 * the new one created in one multi-operation, so that nobody lists the candidate twice or
 * not at all.
 *
 * <p>
 * The store remembers, per candidate, the node it created and the session it created it
 * in: while that session lasts and the weight stays, a call writes nothing. A new session
 * (the old one ended, its node with it) or a new weight writes first, then lists, so the
 * answer holds the entry as written; a node deleted behind the store's back is found
 * missing from the list and created again.
 *
 * <p>
 * Two stores that announce the same candidate id (twins, a misconfiguration) share one
 * node when they give the same weight: the one that created it keeps it, the other lists
 * it and creates its own once it is gone. With different weights, both are listed under
 * the id with the greater weight.
 */
final class LiveCandidates {

	private static final Logger logger = LoggerFactory.getLogger(LiveCandidates.class);

	/**
	 * Between the encoded id and the weight: {@link GroupPaths#encode} never leaves an
	 * '@'.
	 */
	private static final char WEIGHT = '@';

	private final CuratorCalls zookeeper;

	private final GroupPaths paths;

	/** What this store created for each candidate it announced. */
	private final KeyedLocks<Announced> announced = new KeyedLocks<>(Announced::new);

	LiveCandidates(CuratorCalls zookeeper, GroupPaths paths) {
		this.zookeeper = zookeeper;
		this.paths = paths;
	}

	/**
	 * Makes sure that the candidate's node, with this weight, exists in the current
	 * session, and lists the live candidates.
	 * @return the live candidates and their weights, this one included unless a node of
	 * its name belongs to another session (a twin)
	 */
	Map<String, Integer> keepAlive(String candidateId, int weight, long deadline) throws Exception {
		String name = nodeName(candidateId, weight);
		return this.announced.withLock(candidateId, (candidate) -> {
			long session = sessionId();
			if (!candidate.holds(name, session)) {
				announce(candidate, candidateId, name, session, deadline);
			}
			List<String> children = list(deadline);
			// A node missing although written: deleted behind this store's back (by hand,
			// or by a twin's removal). Or a twin's, gone since the create found it.
			if (!children.contains(name) && announce(candidate, candidateId, name, session, deadline)) {
				children.add(name);
			}
			return candidates(children, candidateId, weight, name);
		});
	}

	/**
	 * Deletes what this store created for the candidate in the current session, and
	 * forgets it. Nodes of an earlier session went with it: a node of the same name now
	 * belongs to another session (a twin) and stays.
	 */
	void remove(String candidateId, long deadline) throws Exception {
		this.announced.withLockIfUsed(candidateId, (candidate) -> {
			List<String> nodes = new ArrayList<>();
			if (candidate.session == sessionId()) {
				for (String node : new String[] { candidate.node, candidate.pending }) {
					if (node != null && !nodes.contains(node)) {
						nodes.add(node);
					}
				}
			}
			// Forgotten first: should a delete fail, the node still goes with the
			// session, and a later call for the candidate takes it over.
			candidate.forget();
			for (String node : nodes) {
				this.zookeeper.deleteNode(this.paths.candidate(node), deadline);
			}
			return nodes;
		});
	}

	/**
	 * Creates the candidate's node of this name in this session, replacing the one of
	 * another weight that this session created, if any.
	 * @return whether the node now exists in this session; false when a node of that name
	 * belongs to another session (a twin, or this store's previous session, which
	 * ZooKeeper may still be ending)
	 */
	private boolean announce(Announced candidate, String candidateId, String name, long session, long deadline)
			throws Exception {
		if (candidate.session != session) {
			// The nodes of the earlier session are gone with it.
			candidate.forget();
			candidate.session = session;
		}
		String old = candidate.node;
		String stray = candidate.pending;
		// Recorded before the write: should its answer be lost, a removal still deletes
		// the node, and the next call finds it and keeps it.
		candidate.pending = name;
		if (stray != null && !stray.equals(name) && !stray.equals(old)) {
			// An earlier write whose answer was lost may have created it.
			this.zookeeper.deleteNode(this.paths.candidate(stray), deadline);
		}
		byte[] data = candidateId.getBytes(StandardCharsets.UTF_8);
		if (old != null && !old.equals(name)) {
			if (replace(old, name, data, deadline)) {
				candidate.created(name);
				return true;
			}
			// The old node is gone or the new one exists already: one at a time.
			this.zookeeper.deleteNode(this.paths.candidate(old), deadline);
			candidate.node = null;
		}
		String path = this.paths.candidate(name);
		if (CuratorCalls.isOk(this.zookeeper.createNode(path, data, CreateMode.EPHEMERAL, deadline))
				|| ownedBy(path, session, deadline)) {
			// Created, or created already in this session by an earlier call whose
			// answer was lost (or by Curator's retry of this one).
			candidate.created(name);
			return true;
		}
		candidate.node = null;
		candidate.pending = null;
		logger.debug("Candidate node {} belongs to another session: '{}' is announced by another store too, or its "
				+ "previous session is still ending", path, candidateId);
		return false;
	}

	/** Deletes the old node and creates the new one atomically. */
	private boolean replace(String old, String name, byte[] data, long deadline) throws Exception {
		try {
			return CuratorCalls
				.isOk(this.zookeeper.transaction(deadline, this.zookeeper.delete(this.paths.candidate(old)),
						this.zookeeper.create(this.paths.candidate(name), data, CreateMode.EPHEMERAL)));
		}
		catch (KeeperException.NodeExistsException ex) {
			return false;
		}
	}

	private boolean ownedBy(String path, long session, long deadline) throws Exception {
		CuratorEvent exists = this.zookeeper.exists(path, deadline);
		return exists.getStat() != null && exists.getStat().getEphemeralOwner() == session;
	}

	private List<String> list(long deadline) throws Exception {
		CuratorEvent children = this.zookeeper.getChildren(this.paths.candidates(), deadline);
		return CuratorCalls.isOk(children) ? new ArrayList<>(children.getChildren()) : new ArrayList<>();
	}

	/**
	 * The candidates that the nodes name. Nodes that this store could not have named are
	 * skipped: one stray node must not stop balancing everywhere.
	 */
	private static Map<String, Integer> candidates(List<String> children, String candidateId, int weight, String name) {
		Map<String, Integer> live = new TreeMap<>();
		for (String child : children) {
			int at = child.lastIndexOf(WEIGHT);
			String id = (at >= 0) ? GroupPaths.decode(child.substring(0, at)) : null;
			Integer childWeight = (at >= 0) ? weight(child.substring(at + 1)) : null;
			if (id == null || childWeight == null) {
				logger.debug("Ignoring node {} among the live candidates: not named by this store", child);
				continue;
			}
			// Twins of different weights: the greater, as every reader takes it.
			live.merge(id, childWeight, Math::max);
		}
		if (children.contains(name)) {
			live.put(candidateId, weight);
		}
		return live;
	}

	private static @Nullable Integer weight(String text) {
		try {
			int weight = Integer.parseInt(text);
			return Integer.toString(weight).equals(text) ? weight : null;
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	/**
	 * The candidate's node name.
	 * @throws IllegalArgumentException if the id is not valid Unicode: its node would
	 * list it under another id
	 */
	private static String nodeName(String candidateId, int weight) {
		String encoded = GroupPaths.encode(candidateId);
		if (!candidateId.equals(GroupPaths.decode(encoded))) {
			throw new IllegalArgumentException("Candidate id '" + candidateId
					+ "' is not valid Unicode (it holds an unpaired surrogate), so it cannot be listed as a live "
					+ "candidate in ZooKeeper");
		}
		return encoded + WEIGHT + weight;
	}

	private long sessionId() throws Exception {
		return this.zookeeper.client().getZookeeperClient().getZooKeeper().getSessionId();
	}

	/**
	 * What this store created for a candidate, all in one session. Guarded by its own
	 * lock.
	 */
	private static final class Announced {

		/** The session of the nodes below, or 0. */
		long session;

		/** The node this store created and still holds, or null. */
		@Nullable String node;

		/** A node being written, whose answer has not come (or was lost), or null. */
		@Nullable String pending;

		boolean holds(String name, long session) {
			return this.session == session && name.equals(this.node) && this.pending == null;
		}

		void created(String name) {
			this.node = name;
			this.pending = null;
		}

		void forget() {
			this.session = 0;
			this.node = null;
			this.pending = null;
		}

	}

}
