package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.function.BooleanSupplier;

import io.github.leaderelection.spi.ChangeFeedStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A candidate's place in one group in the store, apart from the election's own steps:
 * joining (a store may queue candidates), watching for changes, queueing again after a
 * hand-over, leaving (and releasing a lease still held then). None of it is needed for
 * safety: a store retries a join on its own, and polling stands in for a watch.
 */
final class GroupMembership {

	private static final Logger logger = LoggerFactory.getLogger(GroupElector.class);

	private final String group;

	private final String candidateId;

	private final LeaseStore store;

	/** The store's change feed, or null: followers then find changes by looking. */
	private final @Nullable ChangeFeedStore feed;

	private final Duration callTimeout;

	private final Duration retryPeriod;

	/** Guarded by this. */
	private @Nullable AutoCloseable watch;

	/** Guarded by this. */
	private boolean closed;

	/** See {@link #hasTried()}. */
	private volatile boolean tried;

	GroupMembership(String group, String candidateId, LeaseStore store, Duration callTimeout, Duration retryPeriod) {
		this.group = group;
		this.candidateId = candidateId;
		this.store = store;
		this.feed = (store instanceof ChangeFeedStore changes) ? changes : null;
		this.callTimeout = callTimeout;
		this.retryPeriod = retryPeriod;
	}

	/**
	 * Joins the group and starts watching it. Runs on a store thread of its own: a store
	 * may queue the candidate and open a connection to watch, and that must hold up
	 * neither the caller of {@code start()}, nor the election (which polls meanwhile),
	 * nor anyone waiting for the elector's lock.
	 * @param onChange what a store notification does: look at the lease now
	 * @param holding whether the candidate holds the lease: if not, it looks once the
	 * watch is open, since a change before went unheard (and a store that queues
	 * candidates queues a watching one); a holder's next look is its renewal
	 */
	void joinAndWatch(Runnable onChange, BooleanSupplier holding) {
		try {
			joinAndStartWatching(onChange, holding);
		}
		finally {
			this.tried = true;
		}
	}

	private void joinAndStartWatching(Runnable onChange, BooleanSupplier holding) {
		synchronized (this) {
			if (this.closed) {
				return;
			}
		}
		try {
			if (this.feed != null) {
				this.feed.join(this.group, this.candidateId, this.callTimeout);
			}
		}
		catch (Exception ex) {
			// The store keeps the candidate and takes its place when it can; meanwhile
			// the candidate still takes a lease it finds free.
			logger.warn("Could not join group '{}' in the {} store yet; the store retries", this.group,
					this.store.backend(), ex);
		}
		AutoCloseable opened;
		try {
			opened = (this.feed != null) ? this.feed.watch(this.group, onChange) : () -> {
			};
		}
		catch (Throwable ex) {
			if (ex instanceof VirtualMachineError error) {
				throw error;
			}
			logger.warn("Could not watch group '{}' in the {} store; relying on polling every {}", this.group,
					this.store.backend(), this.retryPeriod, ex);
			return;
		}
		boolean keep;
		synchronized (this) {
			keep = !this.closed;
			if (keep) {
				this.watch = opened;
			}
		}
		if (!keep) {
			close(opened); // stopped while the watch was being set up
		}
		else if (!holding.getAsBoolean()) {
			onChange.run();
		}
	}

	/**
	 * Whether the join and the watch have been tried (they may have failed): a candidate
	 * is ready to take a group that balancing hands it once every one of its electors has
	 * (see {@link Balancer}).
	 */
	boolean hasTried() {
		return this.tried;
	}

	/** Stops watching; a watch still being opened is closed once open. */
	void stopWatching() {
		AutoCloseable open;
		synchronized (this) {
			this.closed = true;
			open = this.watch;
			this.watch = null;
		}
		// Outside the lock: closing a watch is a store call, which may take its time.
		if (open != null) {
			close(open);
		}
	}

	private void close(AutoCloseable open) {
		try {
			open.close();
		}
		catch (Exception ex) {
			logger.debug("Could not stop watching group '{}'", this.group, ex);
		}
	}

	/**
	 * After a hand-over, takes this candidate's place in the store's queue again at its
	 * end (on stores that queue candidates, ZooKeeper): the lease goes to whoever is next
	 * in line, and a hand-over must go to another candidate, not back to this one.
	 */
	void requeue() {
		try {
			if (this.feed != null) {
				this.feed.leave(this.group, this.candidateId, this.callTimeout);
				this.feed.join(this.group, this.candidateId, this.callTimeout);
			}
		}
		catch (Exception ex) {
			logger.debug("Could not queue again at the end of group '{}' after handing it over; the store retries",
					this.group, ex);
		}
	}

	/**
	 * Releases a lease outside the election's steps: when leaving, or one taken as the
	 * elector stopped. A failure only costs time: another candidate takes over when the
	 * lease expires.
	 */
	void release(Lease lease) {
		try {
			this.store.release(lease, this.callTimeout);
			logger.debug("Released the lease of group '{}' (term {})", this.group, lease.term());
		}
		catch (Exception ex) {
			logger.warn("Could not release the lease of group '{}' (term {}); another candidate takes over when it "
					+ "expires", this.group, lease.term(), ex);
		}
	}

	/** Gives up the candidate's place in the store's queue. */
	void leave() {
		try {
			if (this.feed != null) {
				this.feed.leave(this.group, this.candidateId, this.callTimeout);
			}
		}
		catch (Exception ex) {
			logger.debug("Could not leave group '{}' in the {} store; its place ends with the connection", this.group,
					this.store.backend(), ex);
		}
	}

}
