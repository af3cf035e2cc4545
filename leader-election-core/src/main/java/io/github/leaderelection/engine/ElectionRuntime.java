package io.github.leaderelection.engine;

import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.spi.LeaseStore;
import org.jspecify.annotations.Nullable;

/**
 * What the parts of one engine share: the candidate, the store, the timing, the clock and
 * threads of the scheduler, and the listeners. Each group's elector, the node's rounds
 * and the balancer are given this, and one another only through the few calls each needs
 * of the others, never the engine itself.
 *
 * <p>
 * Once {@linkplain #closing() closing}, it hands the scheduler no more work; and a
 * scheduler the engine was given outlives the engine, so what it left there does nothing
 * once closing began.
 */
final class ElectionRuntime {

	private final String candidateId;

	private final LeaseStore store;

	private final ElectionTiming timing;

	private final ElectionScheduler scheduler;

	/** Whether the scheduler is the engine's own, which it shuts down on close. */
	private final boolean ownScheduler;

	private final Notifier notifier;

	private final StoreOutages storeOutages;

	private final boolean watchBeforeLeading;

	private volatile boolean closing;

	ElectionRuntime(String candidateId, LeaseStore store, ElectionTiming timing, ElectionScheduler scheduler,
			boolean ownScheduler, Notifier notifier, boolean watchBeforeLeading) {
		this.candidateId = candidateId;
		this.store = store;
		this.timing = timing;
		this.scheduler = scheduler;
		this.ownScheduler = ownScheduler;
		this.notifier = notifier;
		this.watchBeforeLeading = watchBeforeLeading;
		this.storeOutages = new StoreOutages(store.backend(), timing.retryPeriod());
	}

	String candidateId() {
		return this.candidateId;
	}

	LeaseStore store() {
		return this.store;
	}

	ElectionTiming timing() {
		return this.timing;
	}

	Notifier notifier() {
		return this.notifier;
	}

	/**
	 * Whether a group's elector acts on a grant only once it has followed the group for a
	 * lease duration (see {@link LeaderElectionEngine.Builder#watchBeforeLeading}).
	 */
	boolean watchBeforeLeading() {
		return this.watchBeforeLeading;
	}

	/** Where the groups' store failures and recoveries are logged, once per outage. */
	StoreOutages storeOutages() {
		return this.storeOutages;
	}

	long nanoTime() {
		return this.scheduler.nanoTime();
	}

	/** From now on no task is handed to the scheduler, and none left there runs. */
	void closing() {
		this.closing = true;
	}

	/**
	 * Runs a task after a delay on the scheduler's clock.
	 * @return its handle, or null if closing and it will not run
	 */
	@Nullable Future<?> schedule(Runnable task, long delayNanos) {
		if (this.closing) {
			return null;
		}
		try {
			return this.scheduler.schedule(unlessClosed(task), delayNanos);
		}
		catch (RejectedExecutionException ex) {
			return null; // closing
		}
	}

	/**
	 * Runs a store task on the store threads.
	 * @return false if closing and the task will not run
	 */
	boolean executeStoreTask(Runnable task) {
		return executeStoreTask(task, false);
	}

	/**
	 * Runs a store task that renews leases ahead of those waiting (see
	 * {@link ElectionScheduler#executeFirst}).
	 * @return false if closing and the task will not run
	 */
	boolean executeRenewal(Runnable task) {
		return executeStoreTask(task, true);
	}

	private boolean executeStoreTask(Runnable task, boolean first) {
		if (this.closing) {
			return false;
		}
		try {
			if (first) {
				this.scheduler.executeFirst(unlessClosed(task));
			}
			else {
				this.scheduler.execute(unlessClosed(task));
			}
			return true;
		}
		catch (RejectedExecutionException ex) {
			return false; // closing
		}
	}

	private Runnable unlessClosed(Runnable task) {
		return this.ownScheduler ? task : () -> {
			if (!this.closing) {
				task.run();
			}
		};
	}

}
