package io.github.leaderelection.zookeeper;

import java.util.HashMap;
import java.util.Map;

import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells a holder's queue node deleted by hand from one gone with its session: an
 * ephemeral node per session that holds leases, {@code <basePath>/.session-<id in hex>},
 * whose session every grant records.
 *
 * <p>
 * When a session ends, ZooKeeper deletes all its ephemeral nodes in one transaction: the
 * holder's queue node and its session's mark go together. The holder stopped believing
 * before that (see {@link ZookeeperLeaseStore}), so the next holder may act at once. A
 * queue node deleted by hand (zkCli's {@code delete}, a recursive delete of the group)
 * leaves the mark, and a holder that still believes until its renew deadline: the next
 * holder then waits the lease duration, as after a forced change.
 *
 * <p>
 * The marks sit right under the base path, above every queue node, so that a recursive
 * delete of the whole base path breadth-first from the bottom (zkCli's {@code deleteall})
 * deletes the queue nodes before the marks. A mark deleted by hand is created again
 * before this store's next grant or renewal; a queue node deleted by hand in between is
 * not told apart, and costs the overlap that this class prevents otherwise.
 */
final class SessionMarks {

	private static final Logger logger = LoggerFactory.getLogger(SessionMarks.class);

	/** The start of a mark's name: like {@link GroupPaths#CANDIDATES}, no group's. */
	static final String PREFIX = ".session-";

	private final CuratorCalls zookeeper;

	private final GroupPaths paths;

	/** The session whose mark is known to exist, or 0. */
	private volatile long marked;

	SessionMarks(CuratorCalls zookeeper, GroupPaths paths) {
		this.zookeeper = zookeeper;
		this.paths = paths;
	}

	String path(long session) {
		return this.paths.base() + "/" + PREFIX + Long.toHexString(session);
	}

	/**
	 * Makes sure that the current session's mark exists, and watches it: one request the
	 * first time in a session and after the mark was deleted, none otherwise.
	 * @return the current session, which the grants made now record
	 */
	long mark(long deadline) throws Exception {
		long session = this.zookeeper.client().getZookeeperClient().getZooKeeper().getSessionId();
		if (this.marked == session) {
			return session;
		}
		String path = path(session);
		CuratorEvent created = this.zookeeper.createNode(path, new byte[0], CreateMode.EPHEMERAL, deadline);
		if (!CuratorCalls.isOk(created)) {
			CuratorEvent exists = this.zookeeper.exists(path, deadline);
			if (exists.getStat() == null || exists.getStat().getEphemeralOwner() != session) {
				// Not this session's (created by hand, or deleted since): grants record
				// the
				// session all the same, and the next one tries again.
				logger.debug("The mark {} of this store's session is not its own", path);
				return session;
			}
		}
		this.marked = session;
		this.zookeeper.watch(path, (event) -> {
			if (event.getType() == Watcher.Event.EventType.NodeDeleted && this.marked == session) {
				this.marked = 0;
			}
		}, (client, event) -> {
			if (!CuratorCalls.isOk(event) && this.marked == session) {
				this.marked = 0;
			}
		});
		return session;
	}

	/**
	 * Whether the previous holder of a group read without its queue node may still
	 * believe: its session's mark still exists, or its session is not known (a grant
	 * written before the marks, or by hand). Not when it is the candidate asking, in the
	 * same session: its store renews the old grant no more.
	 * @param candidateId the candidate that would take the lease
	 * @param session the session it would take it in
	 * @param known the answers already had, by session, for the other groups of a batch
	 */
	boolean holderMayBelieve(GroupView view, String candidateId, long session, Map<Long, Boolean> known, long deadline)
			throws Exception {
		Grant last = view.grant();
		if (last.holder() == null || view.hasLiveHolder()
				|| (last.holder().equals(candidateId) && last.session() == session)) {
			return false;
		}
		if (last.session() == 0) {
			return true;
		}
		Boolean live = known.get(last.session());
		if (live == null) {
			live = this.zookeeper.exists(path(last.session()), deadline).getStat() != null;
			known.put(last.session(), live);
		}
		return live;
	}

	/**
	 * As {@link #holderMayBelieve(GroupView, String, long, Map, long)}, for a group read
	 * alone.
	 */
	boolean holderMayBelieve(GroupView view, String candidateId, long session, long deadline) throws Exception {
		return holderMayBelieve(view, candidateId, session, new HashMap<>(), deadline);
	}

}
