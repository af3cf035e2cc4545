package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.Optional;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How one group's calls to the store went: the failures in a row, and when the store last
 * answered. The first failure of a run and the recovery go to the engine's
 * {@link StoreOutages}, which says them once per outage rather than once per group; the
 * later failures of a run are logged at DEBUG. Thread-safe.
 */
final class StoreHealth {

	private static final Logger logger = LoggerFactory.getLogger(StoreHealth.class);

	private final String group;

	private final StoreOutages outages;

	private int consecutiveFailures;

	private boolean answered;

	/** When the store last answered; meaningful once answered. */
	private long answeredNanos;

	StoreHealth(String group, StoreOutages outages) {
		this.group = group;
		this.outages = outages;
	}

	synchronized void failed(Throwable ex) {
		this.consecutiveFailures++;
		if (this.consecutiveFailures == 1) {
			this.outages.failed(this.group, ex);
		}
		else {
			logger.debug("Election of group '{}' failed {} times in a row", this.group, this.consecutiveFailures, ex);
		}
	}

	synchronized void answered(long nowNanos) {
		this.answered = true;
		this.answeredNanos = nowNanos;
		if (this.consecutiveFailures > 0) {
			this.outages.recovered(this.group, this.consecutiveFailures);
			this.consecutiveFailures = 0;
		}
	}

	/** The calls that failed since the store last answered. */
	synchronized int consecutiveFailures() {
		return this.consecutiveFailures;
	}

	/** Whether the store has answered since the group started. */
	synchronized boolean hasAnswered() {
		return this.answered;
	}

	/** The time since the store last answered, empty if it never has. */
	synchronized Optional<Duration> sinceAnswered(long nowNanos) {
		return this.answered ? Optional.of(Duration.ofNanos(nowNanos - this.answeredNanos)) : Optional.empty();
	}

}
