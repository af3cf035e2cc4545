package io.github.leaderelection.engine;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

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

	/** Joins waiting for a store thread; see {@link #executeJoin}. */
	private final Queue<Runnable> joins = new ConcurrentLinkedQueue<>();

	private final AtomicBoolean joinsQueued = new AtomicBoolean();

	/** Whether this thread runs joins now; see {@link #isRunningJoins}. */
	private final ThreadLocal<Boolean> runningJoins = ThreadLocal.withInitial(() -> false);

	/** What runs after each task of joins; see {@link #afterJoins}. */
	private volatile Runnable afterJoins = () -> {
	};

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

	/**
	 * Runs a group's join (its place in the store, its watch) on a store thread, one join
	 * after another, for at most a quarter of a retry period per task, each task queued
	 * behind the store tasks already waiting. A join may cost requests of its own
	 * (ZooKeeper queues a node per group): a node starting with thousands of groups must
	 * neither hold every store thread nor queue its first rounds, which read and take the
	 * groups in a few requests, behind thousands of joins.
	 * @return false if closing and the join will not run
	 */
	boolean executeJoin(Runnable join) {
		if (this.closing) {
			return false;
		}
		this.joins.add(join);
		queueJoins();
		return true;
	}

	/**
	 * Whether the calling thread runs joins now: what a join asks for (a look at the
	 * group, which a store may ask for once it has queued the candidate) can wait for the
	 * end of the task, so that a task of many joins asks once for all of them.
	 */
	boolean isRunningJoins() {
		return this.runningJoins.get();
	}

	/** Sets what runs after each task of joins, on its thread. */
	void afterJoins(Runnable afterJoins) {
		this.afterJoins = afterJoins;
	}

	private void queueJoins() {
		if (!this.joins.isEmpty() && this.joinsQueued.compareAndSet(false, true) && !executeStoreTask(this::runJoins)) {
			this.joinsQueued.set(false); // closing
		}
	}

	private void runJoins() {
		long until = nanoTime() + this.timing.retryPeriod().toNanos() / 4;
		this.runningJoins.set(true);
		try {
			while (!this.closing && nanoTime() - until < 0) {
				Runnable join = this.joins.poll();
				if (join == null) {
					break;
				}
				join.run();
			}
		}
		finally {
			this.runningJoins.set(false);
			this.joinsQueued.set(false);
			try {
				this.afterJoins.run();
			}
			finally {
				queueJoins();
			}
		}
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
