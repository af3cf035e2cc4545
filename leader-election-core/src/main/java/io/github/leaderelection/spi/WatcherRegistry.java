package io.github.leaderelection.spi;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The callbacks of a store's {@link ChangeFeedStore#watch watches}, by group: a store
 * that hears of changes itself (a notification, a ZooKeeper watch, a lost connection)
 * calls those of the group, or of every group. A callback that throws is logged and does
 * not keep the others from being called; a callback added or removed while the group's
 * are being called is called, or not, from the next notification on.
 *
 * <pre class="code">
 * public AutoCloseable watch(String group, Runnable onChange) {
 *     return this.watchers.add(group, onChange);
 * }
 * </pre>
 */
public final class WatcherRegistry {

	private static final Logger logger = LoggerFactory.getLogger(WatcherRegistry.class);

	private static final Runnable NOTHING = () -> {
	};

	private final Map<String, List<Watcher>> byGroup = new ConcurrentHashMap<>();

	/**
	 * Adds a callback of the group.
	 * @param group the group
	 * @param onChange called on each notification of the group, until closed; it must not
	 * block
	 * @return the watch, which removes the callback when closed (again: nothing)
	 */
	public AutoCloseable add(String group, Runnable onChange) {
		return add(group, onChange, NOTHING);
	}

	/**
	 * Adds a callback of the group, and says when closing it leaves no callback of any
	 * group: a store that listens only while somebody watches stops then. Only a store
	 * that adds and closes watches under a lock of its own, and runs {@code whenNoneLeft}
	 * under it, knows that nobody added one meanwhile.
	 * @param group the group
	 * @param onChange called on each notification of the group, until closed; it must not
	 * block
	 * @param whenNoneLeft run by the close that removes the last callback
	 * @return the watch, which removes the callback when closed (again: nothing)
	 */
	public AutoCloseable add(String group, Runnable onChange, Runnable whenNoneLeft) {
		Watcher watcher = new Watcher(group, Objects.requireNonNull(onChange, "onChange"),
				Objects.requireNonNull(whenNoneLeft, "whenNoneLeft"));
		this.byGroup.compute(group, (key, watchers) -> {
			List<Watcher> list = (watchers != null) ? watchers : new CopyOnWriteArrayList<>();
			list.add(watcher);
			return list;
		});
		return watcher;
	}

	/**
	 * Calls every callback of the group, in the order they were added.
	 * @param group the group
	 */
	public void notifyGroup(String group) {
		for (Watcher watcher : this.byGroup.getOrDefault(group, List.of())) {
			try {
				watcher.onChange.run();
			}
			catch (RuntimeException ex) {
				logger.debug("A watcher of group '{}' failed", group, ex);
			}
		}
	}

	/**
	 * Calls every callback of every group: after a change the store could not hear of
	 * group by group (a connection lost or listening again).
	 */
	public void notifyEveryGroup() {
		this.byGroup.keySet().forEach(this::notifyGroup);
	}

	/**
	 * Whether no callback of any group is left.
	 * @return {@code true} if none is
	 */
	public boolean isEmpty() {
		return this.byGroup.isEmpty();
	}

	private boolean remove(Watcher watcher) {
		AtomicBoolean removed = new AtomicBoolean();
		this.byGroup.computeIfPresent(watcher.group, (key, watchers) -> {
			removed.set(watchers.remove(watcher));
			return watchers.isEmpty() ? null : watchers;
		});
		return removed.get();
	}

	/** One callback of one group, until closed. */
	private final class Watcher implements AutoCloseable {

		private final String group;

		private final Runnable onChange;

		private final Runnable whenNoneLeft;

		Watcher(String group, Runnable onChange, Runnable whenNoneLeft) {
			this.group = group;
			this.onChange = onChange;
			this.whenNoneLeft = whenNoneLeft;
		}

		@Override
		public void close() {
			if (remove(this) && isEmpty()) {
				this.whenNoneLeft.run();
			}
		}

	}

}
