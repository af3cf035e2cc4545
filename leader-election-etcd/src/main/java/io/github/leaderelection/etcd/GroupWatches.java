package io.github.leaderelection.etcd;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.common.exception.ClosedClientException;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.spi.WatcherRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watches of an {@link EtcdLeaseStore}: one etcd watch over
 * {@code <namespace>/groups/}, opened at the first watch, however many groups are
 * watched. Each event goes to the watches of the group whose key it names; keys that are
 * not a group's record or lease key, as the store writes them, are ignored. What the
 * watch last heard of a watched group is kept when it tells all that a read would (see
 * {@link #released}).
 *
 * <p>
 * The etcd watch stays open when the last watch of this store closes, until the store
 * closes: the engine closes a group's watch when the candidate leaves the group and opens
 * one when it joins again (a hand-over that spreads leadership), and a watch opened again
 * each time would cost a round trip and a window in which changes go unheard, to save one
 * watch whose events are dropped as they come.
 *
 * <p>
 * When the etcd watch fails or ends (etcd restarted, a connection lost, the watch
 * cancelled), it is closed and opened again, from the current revision, every 2 seconds
 * until etcd answers, and every watch is told of a change when it fails and again when it
 * is back: whatever happened meanwhile is read again. jetcd would resume a failed watch
 * itself, but from the revision after the last event it delivered, and only on some
 * errors: after an etcd that lost its data that revision may lie ahead of etcd's, and the
 * watch would stay silent until etcd got there.
 */
final class GroupWatches implements AutoCloseable {

	private static final long RETRY_SECONDS = 2;

	private static final Logger logger = LoggerFactory.getLogger(GroupWatches.class);

	/** Told when the watch is in place, so that its return after a failure is known. */
	private static final WatchOption OPTION = WatchOption.builder().isPrefix(true).withCreateNotify(true).build();

	private final Watch watchClient;

	private final String prefix;

	private final WatcherRegistry watchers = new WatcherRegistry();

	/** How many watches each watched group has: news is kept of those only. */
	private final Map<String, Integer> watchedGroups = new ConcurrentHashMap<>();

	/**
	 * What the watch last heard of each watched group, when a read would find no more.
	 */
	private final Map<String, Heard> heard = new ConcurrentHashMap<>();

	private final Object monitor = new Object();

	/**
	 * The etcd watch open or being opened, {@code null} before the first or after a
	 * failure.
	 */
	private @Nullable Stream current;

	private @Nullable ScheduledExecutorService retries;

	/**
	 * Whether the etcd watch failed or ended and is not back yet: every group is read
	 * again when it is.
	 */
	private boolean failing;

	/** Whether a failure was logged as a warning: the return is logged too. */
	private boolean warned;

	private boolean closed;

	/**
	 * @param watchClient the client's watches
	 * @param namespace the store's namespace
	 */
	GroupWatches(Watch watchClient, String namespace) {
		this.watchClient = watchClient;
		this.prefix = namespace + "/groups/";
	}

	/**
	 * Calls {@code onChange} (which must not block) on every change of the group's keys,
	 * and when the etcd watch failed or is back.
	 */
	AutoCloseable watch(String group, Runnable onChange) {
		Objects.requireNonNull(onChange, "onChange");
		AutoCloseable registered = this.watchers.add(group, onChange);
		this.watchedGroups.merge(group, 1, Integer::sum);
		open();
		AtomicBoolean open = new AtomicBoolean(true);
		return () -> {
			if (open.compareAndSet(true, false)) {
				registered.close();
				if (this.watchedGroups.computeIfPresent(group,
						(key, count) -> (count > 1) ? count - 1 : null) == null) {
					this.heard.remove(group);
				}
			}
		};
	}

	/**
	 * The group's record as the watch told of it, if that was a release (or any record
	 * that names no etcd lease, so that no lease key can be live) heard within the
	 * timeout, and the watch has told nothing of the group since. Each piece of news is
	 * handed out once.
	 */
	@Nullable GroupRecord released(String group, Duration timeout) {
		Heard news = this.heard.remove(group);
		return (news != null && System.nanoTime() - news.nanos() < timeout.toNanos()) ? news.record() : null;
	}

	/** Closes the etcd watch and stops trying to open it again. */
	@Override
	public void close() {
		Stream stream;
		ScheduledExecutorService retrying;
		synchronized (this.monitor) {
			this.closed = true;
			stream = this.current;
			retrying = this.retries;
			this.current = null;
			this.retries = null;
		}
		if (retrying != null) {
			retrying.shutdownNow();
		}
		if (stream != null) {
			stream.end();
		}
		this.heard.clear();
	}

	/** Opens the etcd watch unless it is open, being opened, or waiting to be. */
	private void open() {
		Stream stream;
		synchronized (this.monitor) {
			if (this.closed || this.current != null) {
				return;
			}
			stream = new Stream();
			this.current = stream;
		}
		// Outside the monitor: jetcd takes a lock of its own, under which it calls back
		// into this class, which takes the monitor.
		try {
			stream.start();
		}
		catch (RuntimeException ex) {
			failed(stream, ex);
		}
	}

	private boolean isCurrent(Stream stream) {
		synchronized (this.monitor) {
			return this.current == stream;
		}
	}

	/** The etcd watch is in place: after a failure, every group is read again. */
	private void created(Stream stream) {
		boolean recovered;
		boolean logged;
		synchronized (this.monitor) {
			if (this.current != stream) {
				return;
			}
			recovered = this.failing;
			logged = this.warned;
			this.failing = false;
			this.warned = false;
		}
		if (logged) {
			logger.info("Watching {} in etcd again: followers hear of released leases at once again", this.prefix);
		}
		if (recovered) {
			this.heard.clear();
			this.watchers.notifyEveryGroup();
		}
	}

	/** Hands each group's events, in order, to what is kept of it and to its watches. */
	private void received(Stream stream, WatchResponse response) {
		if (!isCurrent(stream)) {
			return;
		}
		// The events of each group's record, by group in the order the groups came.
		Map<String, List<WatchEvent>> byGroup = new LinkedHashMap<>();
		for (WatchEvent event : response.getEvents()) {
			GroupKey key = groupKey(this.prefix, event.getKeyValue().getKey());
			if (key != null) {
				List<WatchEvent> events = byGroup.computeIfAbsent(key.group(), (group) -> new ArrayList<>());
				if (key.isRecord()) {
					events.add(event);
				}
			}
		}
		byGroup.forEach((group, recordEvents) -> {
			heard(group, recordEvents);
			this.watchers.notifyGroup(group);
		});
	}

	/**
	 * Keeps what a read would find if the watch's news of the group tells it all; else
	 * forgets.
	 * @param recordEvents the events of the group's record, in order, within news of the
	 * group
	 */
	private void heard(String group, List<WatchEvent> recordEvents) {
		if (!this.watchedGroups.containsKey(group)) {
			return;
		}
		GroupRecord released = null;
		for (WatchEvent event : recordEvents) {
			released = (event.getEventType() == WatchEvent.EventType.PUT) ? withoutLease(event.getKeyValue()) : null;
		}
		if (released != null) {
			this.heard.put(group, new Heard(released, System.nanoTime()));
		}
		else {
			this.heard.remove(group);
		}
	}

	private static @Nullable GroupRecord withoutLease(KeyValue keyValue) {
		try {
			GroupRecord record = GroupRecord.decode(keyValue);
			return (record.leaseId() == 0) ? record : null;
		}
		catch (LeaderElectionException ex) {
			return null; // a read reports it
		}
	}

	/**
	 * The etcd watch failed or ended: it may have missed changes. What it kept is
	 * forgotten, every group is read again, and the watch is opened again later. A watch
	 * that ended without an error (etcd ended the stream, or the client was closed, which
	 * the next try tells) is not warned of.
	 */
	private void failed(Stream stream, @Nullable Throwable cause) {
		// A closed client opens no watch again: the application is shutting down.
		boolean clientClosed = cause instanceof ClosedClientException;
		boolean first;
		boolean warn;
		synchronized (this.monitor) {
			if (this.closed || this.current != stream) {
				return;
			}
			this.current = null;
			first = !this.failing;
			this.failing = true;
			warn = cause != null && !clientClosed && !this.warned;
			this.warned |= warn;
			if (this.retries == null) {
				this.retries = Executors.newSingleThreadScheduledExecutor((task) -> {
					Thread thread = new Thread(task, "etcd-lease-store-watch");
					thread.setDaemon(true);
					return thread;
				});
			}
			// Closed on the retry thread: jetcd calls back under its lock, amid its own
			// handling of the failure.
			this.retries.execute(stream::end);
			if (!clientClosed) {
				this.retries.schedule(this::open, RETRY_SECONDS, TimeUnit.SECONDS);
			}
		}
		if (clientClosed) {
			logger.debug("Not watching {} in etcd any more: the client was closed", this.prefix);
		}
		else if (warn) {
			logger.warn(
					"The watch of {} in etcd failed (opening it again every {} s); until then followers hear of "
							+ "released leases at their next retry instead of at once: {}",
					this.prefix, RETRY_SECONDS, cause.toString());
		}
		else if (cause == null) {
			logger.debug("The watch of {} in etcd ended; opening it again in {} s", this.prefix, RETRY_SECONDS);
		}
		else {
			logger.debug("The watch of {} in etcd failed again", this.prefix, cause);
		}
		this.heard.clear();
		if (first) {
			this.watchers.notifyEveryGroup();
		}
	}

	/**
	 * The group and key named by a key under the prefix, or {@code null} when the key is
	 * not a group's record or lease key as {@link EtcdLeaseStore#groupKey} writes it (a
	 * key of a nested namespace, or one written by hand).
	 */
	static @Nullable GroupKey groupKey(String prefix, ByteSequence key) {
		String text = key.toString(StandardCharsets.UTF_8);
		if (!text.startsWith(prefix)) {
			return null;
		}
		String rest = text.substring(prefix.length());
		int slash = rest.indexOf('/');
		if (slash <= 0 || rest.indexOf('/', slash + 1) >= 0) {
			return null;
		}
		String encoded = rest.substring(0, slash);
		String name = rest.substring(slash + 1);
		if (!name.equals("record") && !name.equals("lease")) {
			return null;
		}
		String group;
		try {
			group = URLDecoder.decode(encoded, StandardCharsets.UTF_8);
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
		// Only the spelling the store writes: another would be a key of nobody's.
		return EtcdLeaseStore.encode(group).equals(encoded) ? new GroupKey(group, name.equals("record")) : null;
	}

	/**
	 * @param group the group
	 * @param isRecord whether the key is the group's record ({@code false}: its lease
	 * key)
	 */
	record GroupKey(String group, boolean isRecord) {
	}

	private record Heard(GroupRecord record, long nanos) {
	}

	/**
	 * One etcd watch over the prefix; its callbacks count only while it is the current
	 * one.
	 */
	private final class Stream implements Watch.Listener {

		private Watch.@Nullable Watcher watcher;

		private boolean ended;

		void start() {
			Watch.Watcher started = GroupWatches.this.watchClient.watch(EtcdLeaseStore.bytes(GroupWatches.this.prefix),
					OPTION, this);
			boolean end;
			synchronized (this) {
				this.watcher = started;
				end = this.ended;
			}
			if (end) {
				started.close();
			}
		}

		void end() {
			Watch.Watcher started;
			synchronized (this) {
				this.ended = true;
				started = this.watcher;
			}
			if (started != null) {
				started.close();
			}
		}

		@Override
		public void onNext(WatchResponse response) {
			if (response.isCreatedNotify()) {
				created(this);
			}
			else {
				received(this, response);
			}
		}

		@Override
		public void onError(Throwable error) {
			failed(this, error);
		}

		/** Also called when this store closes the watch: no longer current, ignored. */
		@Override
		public void onCompleted() {
			failed(this, null);
		}

	}

}
