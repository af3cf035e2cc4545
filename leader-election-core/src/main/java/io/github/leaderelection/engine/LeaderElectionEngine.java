package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.spi.LeaseStore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the elections of all the groups an application joins, through one store, on a
 * fixed set of threads: one timer, a small pool for store calls and one for
 * notifications, and with two regular store requests per retry period, however many
 * groups there are (see {@link NodeRounds}) (the timer and the store calls can run on an
 * {@link ElectionScheduler} given to the builder instead, such as a
 * {@link VirtualElectionScheduler} in tests). Usable without Spring.
 *
 * <pre class="code">
 * LeaderElectionEngine engine = LeaderElectionEngine.builder(new JdbcLeaseStore(dataSource)).build();
 * LeaderElection orders = engine.join("orders");
 * engine.start();
 * ...
 * if (orders.isLeader()) { ... }
 * ...
 * engine.close(); // stops leading, then releases the leases
 * </pre>
 */
public final class LeaderElectionEngine implements LeaderElectionRegistry, AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(LeaderElectionEngine.class);

	private final LeaseStore store;

	private final String candidateId;

	private final ElectionTiming timing;

	private final boolean releaseOnShutdown;

	private final Duration shutdownTimeout;

	private final ElectionRuntime runtime;

	/** The timer and store threads, when the engine runs on threads of its own. */
	private final @Nullable OwnThreads ownThreads;

	private final ThreadPoolExecutor notifierExecutor;

	private final Notifier notifier;

	private final Map<String, GroupElector> electors = new ConcurrentHashMap<>();

	private final NodeRounds rounds;

	/** Spreads leadership over the live candidates; null unless balancing is on. */
	private final @Nullable Balancer balancer;

	private final Object lifecycleMonitor = new Object();

	private boolean running;

	private boolean closed;

	private LeaderElectionEngine(Builder builder) {
		this.store = builder.store;
		this.candidateId = Names.requireValid("candidate id",
				(builder.candidateId != null) ? builder.candidateId : defaultCandidateId());
		this.timing = builder.timing;
		this.releaseOnShutdown = builder.releaseOnShutdown;
		this.shutdownTimeout = builder.shutdownTimeout;
		this.ownThreads = (builder.scheduler != null) ? null : new OwnThreads(builder.storeThreads);
		ElectionScheduler scheduler = (builder.scheduler != null) ? builder.scheduler
				: Objects.requireNonNull(this.ownThreads);
		// Threads only while there is something to deliver: events are rare.
		this.notifierExecutor = new ThreadPoolExecutor(builder.eventThreads, builder.eventThreads, 10, TimeUnit.SECONDS,
				new LinkedBlockingQueue<>(), OwnThreads.named("leader-election-events"));
		this.notifierExecutor.allowCoreThreadTimeOut(true);
		this.notifier = new Notifier(this.notifierExecutor);
		builder.listeners.forEach(this.notifier::addListener);
		this.runtime = new ElectionRuntime(this.candidateId, this.store, this.timing, scheduler,
				this.ownThreads != null, this.notifier, builder.watchBeforeLeading);
		this.balancer = builder.balanceWeight > 0
				? new Balancer(this.runtime, builder.balanceWeight, builder.preferredLeaders, this.electors::values)
				: null;
		this.rounds = new NodeRounds(this.runtime, this.electors::values,
				(this.balancer != null) ? this.balancer::round : null);
	}

	/** Starts building an engine that elects through the given store. */
	public static Builder builder(LeaseStore store) {
		return new Builder(store);
	}

	/**
	 * A candidate id unique to this process: host name, process id and a random suffix,
	 * so that two processes on one host, or a restarted process, never share one.
	 */
	public static String defaultCandidateId() {
		return Names.defaultCandidateId();
	}

	@Override
	public String candidateId() {
		return this.candidateId;
	}

	/** The durations this engine elects with. */
	public ElectionTiming timing() {
		return this.timing;
	}

	/** The store this engine elects through. */
	public LeaseStore store() {
		return this.store;
	}

	@Override
	public LeaderElection join(String group) {
		Names.requireValid("group", group);
		synchronized (this.lifecycleMonitor) {
			if (this.closed) {
				throw new IllegalStateException("Cannot join group '" + group + "': the election engine is closed");
			}
			GroupElector elector = this.electors.computeIfAbsent(group,
					(name) -> new GroupElector(name, this.runtime, this.rounds, this.balancer));
			if (this.running) {
				elector.start();
			}
			return elector;
		}
	}

	@Override
	public Optional<LeaderElection> find(String group) {
		return Optional.ofNullable(this.electors.get(group));
	}

	@Override
	public Collection<LeaderElection> elections() {
		return List.copyOf(this.electors.values());
	}

	/**
	 * A snapshot of a joined group's election, for health checks and endpoints; no I/O.
	 */
	public Optional<ElectionStatus> status(String group) {
		return Optional.ofNullable(this.electors.get(group)).map(GroupElector::status);
	}

	/**
	 * Whether a joined group's election cannot work from here: it has not reached the
	 * store for longer than the renew deadline. A follower that reaches the store is
	 * healthy.
	 */
	public boolean isStoreUnreachable(String group) {
		GroupElector elector = this.electors.get(group);
		return elector != null
				&& elector.status().isStoreUnreachable(this.timing.renewDeadline(), elector.sinceStarted());
	}

	/**
	 * Whether this engine spreads leadership over the live candidates (see
	 * {@link Builder#balance}).
	 */
	public boolean isBalancing() {
		return this.balancer != null;
	}

	/**
	 * Runs a balancing round now rather than at the next retry period: this instance
	 * announces itself and hands over what the plan takes from it. The other instances
	 * follow at their own next round.
	 * @throws IllegalStateException if this engine does not balance or is not running
	 */
	public void rebalance() {
		Balancer current = this.balancer;
		if (current == null) {
			throw new IllegalStateException("Balancing is off (leader-election.balance.enabled): nothing to rebalance");
		}
		if (!isRunning() || !this.runtime.executeStoreTask(current::round)) {
			throw new IllegalStateException("The election engine is not running");
		}
	}

	/**
	 * How many of this engine's groups each live candidate leads, as this engine last
	 * counted them (once per retry period, and when a group it holds back was released
	 * after the last count); empty unless balancing, and until the first count. No I/O.
	 */
	public Map<String, Integer> leadersByCandidate() {
		return (this.balancer != null) ? this.balancer.leadersByCandidate() : Map.of();
	}

	@Override
	public void addListener(LeaderElectionListener listener) {
		this.notifier.addListener(Objects.requireNonNull(listener, "listener"));
	}

	/** Starts competing in every group joined so far, and in every group joined later. */
	public void start() {
		synchronized (this.lifecycleMonitor) {
			if (this.closed) {
				throw new IllegalStateException("The election engine is closed and cannot be started again");
			}
			if (this.running) {
				return;
			}
			if (this.balancer != null) {
				this.balancer.checkStore();
			}
			this.running = true;
			logger.info(
					"Starting leader election as candidate '{}' through the {} store ({} group(s); lease {}, "
							+ "renew deadline {}, retry period {})",
					this.candidateId, this.store.backend(), this.electors.size(), this.timing.leaseDuration(),
					this.timing.renewDeadline(), this.timing.retryPeriod());
			if (!this.timing.survivesRestores()) {
				logger.warn(
						"The lease is shorter than two renew deadlines: should the store go back to an older "
								+ "copy of its data, two instances may lead at once for up to {}",
						this.timing.restoreOverlap());
			}
			this.electors.values().forEach(GroupElector::start);
			this.rounds.start();
		}
	}

	/** Whether the engine has been started and not closed. */
	public boolean isRunning() {
		synchronized (this.lifecycleMonitor) {
			return this.running;
		}
	}

	/**
	 * Stops every election in order: first nobody here believes it leads and the
	 * revocations are delivered to the listeners (which may wait for leader-only work to
	 * finish), then the candidate leaves the list of live candidates (when balancing),
	 * the leases are released (when release on shutdown is on) and the candidate leaves
	 * each group in the store, so that a follower never takes over while leader-only work
	 * still runs here. Waits at most the shutdown timeout for the listeners, at most as
	 * long again for the releases, and at most as long again for its threads to end, so
	 * that a store that hangs cannot hang the shutdown. The store stays open: whoever
	 * created it closes it, after the engine (a Spring context does).
	 */
	@Override
	public void close() {
		List<GroupElector> stopping;
		synchronized (this.lifecycleMonitor) {
			if (this.closed) {
				return;
			}
			this.closed = true;
			this.runtime.closing();
			this.running = false;
			stopping = new ArrayList<>(this.electors.values());
		}
		stopping.forEach(GroupElector::stop);
		if (!this.notifier.awaitDelivered(this.shutdownTimeout)) {
			logger.warn("Leader election listeners did not finish within {} of shutdown", this.shutdownTimeout);
		}
		if (this.ownThreads != null) {
			this.ownThreads.timer.shutdownNow();
		}
		leaveAll(stopping);
		if (this.ownThreads != null) {
			this.ownThreads.store.shutdownNow();
		}
		this.notifierExecutor.shutdown();
		awaitThreads();
		logger.info("Stopped leader election as candidate '{}'", this.candidateId);
	}

	/**
	 * Waits, at most the shutdown timeout, for the engine's threads to end: a store call
	 * may ignore its interrupt, and a listener may still be stopping leader-only work.
	 */
	private void awaitThreads() {
		long deadline = System.nanoTime() + this.shutdownTimeout.toNanos();
		try {
			List<ExecutorService> pools = (this.ownThreads != null)
					? List.of(this.ownThreads.timer, this.ownThreads.store.executor(), this.notifierExecutor)
					: List.of(this.notifierExecutor);
			for (ExecutorService pool : pools) {
				if (!pool.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
					logger.warn(
							"Leader election threads were still busy {} after shutdown (a store call or a "
									+ "listener that does not end); leaving them to end on their own",
							this.shutdownTimeout);
					return;
				}
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void leaveAll(List<GroupElector> electors) {
		// A thread of its own: the store threads may be stuck in calls to a store that
		// hangs.
		Thread releaser = new Thread(() -> {
			// Off the list of live candidates first: a candidate that sees a group
			// released lists the live candidates again before it holds the group back
			// for one, and this one is not coming back.
			if (this.balancer != null) {
				this.balancer.leave();
			}
			electors.forEach((elector) -> elector.leaveAfterStop(this.releaseOnShutdown));
		}, "leader-election-release");
		releaser.setDaemon(true);
		releaser.start();
		try {
			releaser.join(this.shutdownTimeout.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		if (releaser.isAlive()) {
			logger.warn(
					"Leader election could not release its leases and leave its groups within {}: the {} store "
							+ "does not answer. " + "Other candidates take over when the leases expire",
					this.shutdownTimeout, this.store.backend());
			releaser.interrupt();
		}
	}

	/** The listeners' deliveries, for tests that await them. */
	Notifier notifier() {
		return this.notifier;
	}

	/**
	 * Builds a {@link LeaderElectionEngine}.
	 */
	public static final class Builder {

		private final LeaseStore store;

		private @Nullable String candidateId;

		private ElectionTiming timing = ElectionTiming.DEFAULTS;

		private int storeThreads = 2;

		private int eventThreads = 4;

		private boolean releaseOnShutdown = true;

		private boolean watchBeforeLeading;

		private Duration shutdownTimeout = Duration.ofSeconds(10);

		private @Nullable ElectionScheduler scheduler;

		private int balanceWeight;

		private Map<String, String> preferredLeaders = Map.of();

		private final List<LeaderElectionListener> listeners = new ArrayList<>();

		private Builder(LeaseStore store) {
			this.store = Objects.requireNonNull(store, "store");
		}

		/**
		 * This instance's candidate id; must be unique per process. Defaults to
		 * {@link #defaultCandidateId()}.
		 */
		public Builder candidateId(String candidateId) {
			this.candidateId = candidateId;
			return this;
		}

		public Builder timing(ElectionTiming timing) {
			this.timing = Objects.requireNonNull(timing, "timing");
			return this;
		}

		/**
		 * Threads that make store calls, shared by all groups (default 2). More help only
		 * when the store is slow and there are many groups. Not used with a
		 * {@linkplain #scheduler scheduler} of the caller's.
		 */
		public Builder storeThreads(int storeThreads) {
			if (storeThreads < 1) {
				throw new IllegalArgumentException("storeThreads must be at least 1 but is " + storeThreads);
			}
			this.storeThreads = storeThreads;
			return this;
		}

		/**
		 * Threads that call the listeners, shared by all groups (default 4). One group's
		 * changes are delivered in order, one at a time; a listener that takes its time
		 * over one group holds up only that group, as long as fewer groups than this are
		 * held up at once. Idle threads end.
		 */
		public Builder eventThreads(int eventThreads) {
			if (eventThreads < 1) {
				throw new IllegalArgumentException("eventThreads must be at least 1 but is " + eventThreads);
			}
			this.eventThreads = eventThreads;
			return this;
		}

		/**
		 * Whether {@link LeaderElectionEngine#close()} releases held leases (default
		 * true).
		 */
		public Builder releaseOnShutdown(boolean releaseOnShutdown) {
			this.releaseOnShutdown = releaseOnShutdown;
			return this;
		}

		/**
		 * Whether to act on a group's lease only after following the group for a lease
		 * duration (default false): then a record the store lost before this instance
		 * started never makes it a second leader (see {@code GroupCalls.afterWatching}).
		 */
		public Builder watchBeforeLeading(boolean watchBeforeLeading) {
			this.watchBeforeLeading = watchBeforeLeading;
			return this;
		}

		/**
		 * How long closing waits for listeners (and the leader-only work they wait for).
		 */
		public Builder shutdownTimeout(Duration shutdownTimeout) {
			Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
			// Zero would mean "wait forever" to Thread.join, and a negative value throws
			// there, in the middle of close(): neither may reach the shutdown path.
			if (shutdownTimeout.isNegative() || shutdownTimeout.isZero()) {
				throw new IllegalArgumentException("shutdown-timeout must be positive but is " + shutdownTimeout);
			}
			this.shutdownTimeout = shutdownTimeout;
			return this;
		}

		public Builder listener(LeaderElectionListener listener) {
			this.listeners.add(Objects.requireNonNull(listener, "listener"));
			return this;
		}

		/**
		 * The clock and the threads to run on instead of the engine's own timer and store
		 * threads: a {@link VirtualElectionScheduler} in tests, so that they drive time.
		 * The engine does not shut it down. Listeners are called on the engine's event
		 * threads either way.
		 */
		public Builder scheduler(ElectionScheduler scheduler) {
			this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
			return this;
		}

		/**
		 * Spreads leadership over the live candidates in proportion to their weights,
		 * instead of leaving every group with whoever started first: each candidate leads
		 * between the floor and the ceiling of its share of the groups. Needs a store
		 * that lists live candidates (all the stores of this project do).
		 * @param weight this candidate's weight, at least 1 (2 takes twice the share of
		 * 1)
		 * @param preferredLeaders groups pinned to a candidate, which leads them whenever
		 * it is live
		 */
		public Builder balance(int weight, Map<String, String> preferredLeaders) {
			if (weight < 1) {
				throw new IllegalArgumentException("balance weight must be at least 1 but is " + weight);
			}
			preferredLeaders.forEach((group, candidate) -> {
				Names.requireValid("group", group);
				Names.requireValid("candidate id", candidate);
			});
			this.balanceWeight = weight;
			this.preferredLeaders = Map.copyOf(preferredLeaders);
			return this;
		}

		public LeaderElectionEngine build() {
			return new LeaderElectionEngine(this);
		}

	}

}
