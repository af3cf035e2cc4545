package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.Optional;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How one group's calls to the store went: the failures in a row, and when the store last
 * answered. Logs the first failure of a run at WARN (the rest at DEBUG) and the recovery
 * at INFO, so that an outage shows as two lines per group, not one per retry.
 * Thread-safe.
 */
final class StoreHealth {

	private static final Logger logger = LoggerFactory.getLogger(StoreHealth.class);

	private final String group;

	private final String backend;

	private final Duration retryPeriod;

	private int consecutiveFailures;

	private boolean answered;

	/** When the store last answered; meaningful once answered. */
	private long answeredNanos;

	StoreHealth(String group, String backend, Duration retryPeriod) {
		this.group = group;
		this.backend = backend;
		this.retryPeriod = retryPeriod;
	}

	synchronized void failed(Throwable ex) {
		this.consecutiveFailures++;
		if (this.consecutiveFailures == 1) {
			logger.warn("Election of group '{}' failed on the {} store (retrying every {}): {}", this.group,
					this.backend, this.retryPeriod, ex.toString());
			logger.debug("Store failure detail", ex);
		}
		else {
			logger.debug("Election of group '{}' failed {} times in a row", this.group, this.consecutiveFailures, ex);
		}
	}

	synchronized void answered(long nowNanos) {
		this.answered = true;
		this.answeredNanos = nowNanos;
		if (this.consecutiveFailures > 0) {
			logger.info("Election of group '{}' reached the {} store again after {} failed attempts", this.group,
					this.backend, this.consecutiveFailures);
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
