package io.github.leaderelection.actuate;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Counts the write operations asked of each group over a sliding window and refuses those
 * beyond a limit: each force or yield may leave the group without a leader for up to a
 * lease duration, so a loop of them keeps it leaderless for as long as it runs.
 */
final class OperatorActions {

	/** Actions one group accepts within the window, unless configured. */
	static final int DEFAULT_MAX_ACTIONS = 10;

	/** Window over which a group's actions are counted, unless configured. */
	static final Duration DEFAULT_WINDOW = Duration.ofMinutes(1);

	private final int maxActions;

	private final long windowNanos;

	private final LongSupplier nanoClock;

	private final Map<String, Deque<Long>> groups = new ConcurrentHashMap<>();

	OperatorActions(int maxActions, Duration window) {
		this(maxActions, window, System::nanoTime);
	}

	OperatorActions(int maxActions, Duration window, LongSupplier nanoClock) {
		if (maxActions < 1) {
			throw new IllegalArgumentException("leader-election.endpoint.max-actions-per-group must be at least 1");
		}
		if (window.isNegative() || window.isZero()) {
			throw new IllegalArgumentException("leader-election.endpoint.action-window must be positive");
		}
		this.maxActions = maxActions;
		this.windowNanos = window.toNanos();
		this.nanoClock = nanoClock;
	}

	int maxActions() {
		return this.maxActions;
	}

	Duration window() {
		return Duration.ofNanos(this.windowNanos);
	}

	/**
	 * Counts an action on the group, unless the group already had the most the window
	 * allows.
	 * @return empty when counted, else how long until the next one is accepted
	 */
	Optional<Duration> tryCount(String group) {
		long now = this.nanoClock.getAsLong();
		Deque<Long> times = this.groups.computeIfAbsent(group, (key) -> new ArrayDeque<>());
		synchronized (times) {
			while (!times.isEmpty() && now - times.peekFirst() >= this.windowNanos) {
				times.removeFirst();
			}
			if (times.size() >= this.maxActions) {
				return Optional.of(Duration.ofNanos(times.peekFirst() + this.windowNanos - now));
			}
			times.addLast(now);
			return Optional.empty();
		}
	}

}
