package io.github.leaderelection.zookeeper;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The groups as last read, kept as long as a persistent recursive watch on the base path
 * (ZooKeeper 3.6 and later) says that nothing under them changed: a follower's regular
 * read of its groups is answered from here, with no request, while nobody writes.
 *
 * <p>
 * Every change under a group (its data: a grant, a renewal that writes, a release; its
 * queue: a node created or deleted, a session that ended) fires the watch, which forgets
 * the group. ZooKeeper sends a watch event before any answer that shows the change, so a
 * read is kept only if no event of its group came between the moment it was sent and the
 * moment it is kept: a read that may predate a change is never kept after the change's
 * event. Reads count only once the watch has been added on the current connection (the
 * answer of the request adding it came before the read was sent), and every change of the
 * connection (SUSPENDED, RECONNECTED, LOST) forgets everything: events missed while
 * disconnected are not sent again for the nodes below the watched one.
 *
 * <p>
 * What is kept is only ever read back, never written on: every grant, renewal and release
 * checks the group node's version on the server.
 */
final class WatchedGroups {

	private static final Logger logger = LoggerFactory.getLogger(WatchedGroups.class);

	private final CuratorFramework client;

	private final String basePath;

	private final Watcher watcher = this::changed;

	/**
	 * Bumped on every change of the connection: what was kept before no longer counts.
	 */
	private final AtomicLong connection = new AtomicLong();

	/** The connection on which the watch was added, or -1. */
	private volatile long watching = -1;

	private final AtomicBoolean adding = new AtomicBoolean();

	/**
	 * The connection on which ZooKeeper refused the watch (a server before 3.6), or -1:
	 * not asked again on it.
	 */
	private volatile long refused = -1;

	private final Map<String, Kept> groups = new ConcurrentHashMap<>();

	private final GroupReads reads;

	WatchedGroups(CuratorFramework client, String basePath, GroupReads reads) {
		this.client = client;
		this.basePath = basePath;
		this.reads = reads;
	}

	/**
	 * The groups as read: from what was kept of a group that did not change since its
	 * last read, from ZooKeeper otherwise (the groups that did change, in one request
	 * while they fit in half a packet, see {@link GroupReads}).
	 * @param connected whether the client is connected: if not, every group is asked from
	 * ZooKeeper
	 * @return the view of each group, null for a group that does not exist
	 */
	Map<String, @Nullable GroupView> read(Set<String> groups, boolean connected, long deadline) throws Exception {
		if (groups.isEmpty()) {
			return Map.of();
		}
		Stamp stamp = connected ? stamp() : new Stamp(-1, false);
		Map<String, @Nullable GroupView> views = new LinkedHashMap<>();
		Map<String, Long> changesBefore = new LinkedHashMap<>();
		for (String group : groups) {
			Kept kept = kept(group, stamp);
			views.put(group, (kept != null) ? kept.view() : null);
			if (kept == null) {
				changesBefore.put(group, changes(group));
			}
		}
		if (!changesBefore.isEmpty()) {
			for (Map.Entry<String, @Nullable GroupView> read : this.reads.read(changesBefore.keySet(), deadline)
				.entrySet()) {
				views.put(read.getKey(), read.getValue());
				keep(read.getKey(), stamp, changesBefore.get(read.getKey()), read.getValue());
			}
		}
		return views;
	}

	/** Adds the watch, unless it is on or being added: when connected. */
	void watch() {
		long now = this.connection.get();
		if (this.watching != now && this.refused != now) {
			watch(now);
		}
	}

	/**
	 * Where a read stands before it is sent: the connection, and whether the watch was on
	 * by then.
	 */
	private Stamp stamp() {
		watch();
		long now = this.connection.get();
		return new Stamp(now, this.watching == now);
	}

	/**
	 * What the group's last read kept, if nothing changed since.
	 * @return the read, or null if none is kept
	 */
	private @Nullable Kept kept(String group, Stamp stamp) {
		Kept kept = this.groups.get(group);
		return (stamp.watching() && kept != null && kept.read() && kept.connection() == stamp.connection()
				&& this.connection.get() == stamp.connection()) ? kept : null;
	}

	/** How many changes of the group were heard so far: a read keeps their count. */
	private long changes(String group) {
		Kept kept = this.groups.get(group);
		return (kept != null) ? kept.changes() : 0;
	}

	/**
	 * Keeps a read of the group, sent at the stamp after the given number of changes,
	 * unless the group or the connection changed since.
	 * @param view the group as read, null if it does not exist
	 */
	private void keep(String group, Stamp stamp, long changesBefore, @Nullable GroupView view) {
		if (!stamp.watching()) {
			return;
		}
		this.groups.compute(group, (key, kept) -> {
			long changes = (kept != null) ? kept.changes() : 0;
			if (changes != changesBefore || this.connection.get() != stamp.connection()) {
				return kept;
			}
			return new Kept(changes, stamp.connection(), true, view);
		});
	}

	/** Forgets every read: the connection changed. */
	void connectionChanged() {
		this.connection.incrementAndGet();
		this.groups.clear();
	}

	/** Stops watching. */
	void close() {
		try {
			this.client.watchers()
				.remove(this.watcher)
				.ofType(Watcher.WatcherType.Any)
				.quietly()
				.inBackground()
				.forPath(this.basePath);
		}
		catch (Exception ex) {
			logger.debug("Could not remove the watch on {}", this.basePath, ex);
		}
	}

	private void watch(long connection) {
		if (!this.client.getZookeeperClient().isConnected() || !this.adding.compareAndSet(false, true)) {
			return;
		}
		try {
			this.client.watchers()
				.add()
				.withMode(AddWatchMode.PERSISTENT_RECURSIVE)
				.inBackground((client, event) -> added(connection, event))
				.usingWatcher(this.watcher)
				.forPath(this.basePath);
		}
		catch (Exception ex) {
			this.adding.set(false);
			logger.debug("Could not watch {}", this.basePath, ex);
		}
	}

	private void added(long connection, CuratorEvent event) {
		this.adding.set(false);
		if (CuratorCalls.isOk(event) && this.connection.get() == connection) {
			this.watching = connection;
		}
		else if (CuratorCalls.isOk(event)) {
			// The connection changed while it was being added, which added none.
			watch();
		}
		else {
			this.refused = connection;
			logger.debug("Could not watch {} (code {}): every read goes to ZooKeeper", this.basePath,
					event.getResultCode());
		}
	}

	private void changed(WatchedEvent event) {
		String path = event.getPath();
		if (event.getType() == Watcher.Event.EventType.None || path == null || !path.startsWith(this.basePath + "/")) {
			return;
		}
		int end = path.indexOf('/', this.basePath.length() + 1);
		String group = GroupPaths.decode(path.substring(this.basePath.length() + 1, (end < 0) ? path.length() : end));
		if (group != null) {
			this.groups.compute(group, (key, kept) -> new Kept(((kept != null) ? kept.changes() : 0) + 1,
					this.connection.get(), false, null));
		}
	}

	/**
	 * Where a read stood when it was sent.
	 *
	 * @param connection the connection it was sent on
	 * @param watching whether the watch was on by then
	 */
	record Stamp(long connection, boolean watching) {

	}

	/**
	 * A group's changes heard, and its last read if kept.
	 *
	 * @param changes the changes heard of the group
	 * @param connection the connection of the read
	 * @param read whether a read is kept
	 * @param view the group as read, null if it does not exist
	 */
	record Kept(long changes, long connection, boolean read, @Nullable GroupView view) {

	}

}
