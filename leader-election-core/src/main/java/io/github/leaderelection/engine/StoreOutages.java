package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log lines of an engine's store outages, across its groups: a store that stops
 * answering fails every group's calls at once, and a batch of thousands of groups would
 * otherwise say so thousands of times. The first group to fail says it at WARN, and so
 * does the first group that fails otherwise (another message, such as a batch of another
 * size that ran out of time); the others that fail alike say it at DEBUG. When the last
 * failing group reaches the store again, that is said at INFO with how many groups had
 * failed; the other recoveries at DEBUG. Logged under {@link StoreHealth}'s name, the
 * logger the group's store health has always used. Thread-safe.
 */
final class StoreOutages {

	private static final Logger logger = LoggerFactory.getLogger(StoreHealth.class);

	private final String backend;

	private final Duration retryPeriod;

	private final Set<String> failing = new HashSet<>();

	/**
	 * What the outage's failures said, each said once at WARN; empty when no group fails.
	 */
	private final Set<String> causes = new HashSet<>();

	/** The groups that failed since the outage began, recovered since or not. */
	private final Set<String> failedInOutage = new HashSet<>();

	StoreOutages(String backend, Duration retryPeriod) {
		this.backend = backend;
		this.retryPeriod = retryPeriod;
	}

	/** A group's first failure since it last reached the store. */
	synchronized void failed(String group, Throwable ex) {
		this.failing.add(group);
		this.failedInOutage.add(group);
		String message = ex.toString();
		if (this.causes.add(message)) {
			logger.warn("Election of group '{}' failed on the {} store (retrying every {}): {}", group, this.backend,
					this.retryPeriod, message);
			logger.debug("Store failure detail", ex);
		}
		else {
			logger.debug("Election of group '{}' failed on the {} store as well ({} groups failing)", group,
					this.backend, this.failing.size(), ex);
		}
	}

	/** A group reached the store again after the given failed attempts. */
	synchronized void recovered(String group, int failedAttempts) {
		this.failing.remove(group);
		if (!this.failing.isEmpty()) {
			logger.debug("Election of group '{}' reached the {} store again after {} failed attempts", group,
					this.backend, failedAttempts);
			return;
		}
		int failed = this.failedInOutage.size();
		String others = (failed > 1) ? ", the last of " + failed + " groups that failed" : "";
		logger.info("Election of group '{}' reached the {} store again after {} failed attempts{}", group, this.backend,
				failedAttempts, others);
		this.causes.clear();
		this.failedInOutage.clear();
	}

}
