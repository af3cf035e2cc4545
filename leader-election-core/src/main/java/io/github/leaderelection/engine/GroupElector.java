package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.LeaderInfo;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The election loop of one group: acquires, renews and releases the group's lease through
 * the store, and turns what it learns into a belief that ends at a deadline on the
 * monotonic clock.
 *
 * <p>
 * State lives in two places. The belief is one volatile immutable object, read without a
 * lock by {@link #isLeader()}. Everything else is guarded by {@code this} and changed
 * only in short synchronized blocks that never contain a store call, so a hung store
 * cannot block readers, the deadline timer or an administrator.
 *
 * <p>
 * The regular steps, a leader's renewal and a follower's look at the lease, are not this
 * elector's own: the node's {@link NodeRounds rounds} take them for all groups at once,
 * one store request each per retry period, and hand each elector its outcome. An elector
 * makes calls of its own only for what is not regular: taking a lease it saw free,
 * releasing, retrying after a failure, waiting out an earlier holder. These attempts run
 * on the engine's shared store threads, at most one at a time per group: a request
 * arriving while one runs is folded into a single follow-up attempt.
 */
final class GroupElector implements LeaderElection {

	private static final Logger logger = LoggerFactory.getLogger(GroupElector.class);

	/**
	 * What an attempt returns instead of a delay when its next step is the node's round:
	 * a renewal of the lease it believes in, or a look at the lease it follows.
	 */
	private static final long NEXT_ROUND = Long.MIN_VALUE;

	private final String group;

	private final ElectionRuntime runtime;

	private final Rounds rounds;

	/** Null unless balancing. */
	private final @Nullable Balancing balancing;

	private final LeaseStore store;

	private final String candidateId;

	private final long renewDeadlineNanos;

	private final long retryPeriodNanos;

	private final Duration callTimeout;

	/** Non-null while this instance believes it leads, until {@link Belief#deadline}. */
	private volatile @Nullable Belief belief;

	/**
	 * The lease this instance holds in the store: believed, or pending until activeFrom.
	 */
	private @Nullable Lease held;

	/** Renewals starting before this instant do not grant a pending lease. */
	private long activeFromNanos;

	/** After a yield, or a lease given up, another candidate gets the first try. */
	private final StayOut stayOut = new StayOut();

	/**
	 * A lease to release at the next attempt, one this instance no longer believes in
	 * (after a yield, or a belief that ended at its deadline); null when none. The lease
	 * itself, not a flag: a flag left over from an earlier lease once released the lease
	 * acquired after it, while this instance believed in it.
	 */
	private @Nullable Lease releasing;

	private boolean started;

	private boolean stopped;

	private long startedNanos;

	private final StoreHealth health;

	private @Nullable LeaderInfo observed;

	/** Notices another process competing under this candidate id. Guarded by this. */
	private final DuplicateIdDetector duplicateId;

	private @Nullable Future<?> nextAttempt;

	private @Nullable Future<?> deadlineCheck;

	private @Nullable AutoCloseable watch;

	/**
	 * Whether the next regular step belongs to the node's round rather than to an attempt
	 * scheduled by this elector. Guarded by this.
	 */
	private boolean inRounds;

	/** Whether a round's store call for this group is on its way. Guarded by this. */
	private boolean roundCallPending;

	/**
	 * When this elector first saw the lease released, once past any stay-out, while
	 * balancing (its hold-back counts from then); 0 until it sees it, and again once it
	 * sees it led. Guarded by this.
	 */
	private long freeSinceNanos;

	/**
	 * When the current belief was granted; meaningful while it lasts. Guarded by this.
	 */
	private long grantedNanos;

	/**
	 * Whether the next release is a hand-over; see {@link #requeue()}. Guarded by this.
	 */
	private boolean requeueAfterRelease;

	private final AtomicBoolean attemptRunning = new AtomicBoolean();

	private volatile boolean attemptRequested;

	/**
	 * Whether the join and the watch that {@link #start()} set off have been tried (they
	 * may have failed: the store retries a join on its own, and polling stands in for a
	 * watch); see {@link #hasJoined()}.
	 */
	private volatile boolean joinTried;

	/**
	 * @param rounds the node's rounds, which read and take the leases of many groups at
	 * once
	 * @param balancing the balancer, or null unless balancing
	 */
	GroupElector(String group, ElectionRuntime runtime, Rounds rounds, @Nullable Balancing balancing) {
		this.group = group;
		this.runtime = runtime;
		this.rounds = rounds;
		this.balancing = balancing;
		this.store = runtime.store();
		this.candidateId = runtime.candidateId();
		this.renewDeadlineNanos = runtime.timing().renewDeadline().toNanos();
		this.retryPeriodNanos = runtime.timing().retryPeriod().toNanos();
		this.callTimeout = runtime.timing().storeCallTimeout();
		this.duplicateId = new DuplicateIdDetector(group, this.candidateId,
				2 * runtime.timing().leaseDuration().toNanos());
		this.health = new StoreHealth(group, this.store.backend(), runtime.timing().retryPeriod());
	}

	@Override
	public String group() {
		return this.group;
	}

	@Override
	public String candidateId() {
		return this.candidateId;
	}

	@Override
	public boolean isLeader() {
		Belief current = this.belief;
		return current != null && current.isHeldAt(now());
	}

	@Override
	public Optional<Leadership> leadership() {
		Belief current = this.belief;
		return (current != null && current.isHeldAt(now())) ? Optional.of(current.leadership) : Optional.empty();
	}

	private boolean isLeadingInTerm(long term) {
		Belief current = this.belief;
		return current != null && current.leadership.term() == term && current.isHeldAt(now());
	}

	@Override
	public synchronized Optional<LeaderInfo> currentLeader() {
		return Optional.ofNullable(this.observed);
	}

	@Override
	public Optional<LeaderInfo> readLeader() {
		Optional<Lease> lease = callStore("read the leader", () -> this.store.read(this.group, this.callTimeout));
		observe(lease.orElse(null));
		return lease.filter(Lease::hasLiveHolder).map(this::toLeaderInfo);
	}

	@Override
	public boolean yieldLeadership() {
		return giveUp(RevocationReason.YIELDED);
	}

	/**
	 * Gives the group up so that balancing can move it to a candidate that leads fewer
	 * groups than its share; see {@link Balancer}.
	 */
	void handOver() {
		giveUp(RevocationReason.REBALANCED);
	}

	private boolean giveUp(RevocationReason reason) {
		boolean wasLeading;
		synchronized (this) {
			this.requeueAfterRelease = reason == RevocationReason.REBALANCED;
			Belief current = believed();
			wasLeading = current != null && current.isHeldAt(now());
			if (current != null) {
				transition(null, reason);
			}
			if (this.held != null) {
				this.releasing = this.held;
				// Twice the retry period: followers try within one, so one of them gets
				// the lease first.
				this.stayOut.start(now(), 2 * this.retryPeriodNanos, this.held.term());
			}
		}
		requestAttempt();
		return wasLeading;
	}

	@Override
	public void forceLeader(String targetCandidateId) {
		Names.requireValid("candidate id", targetCandidateId);
		callStore("force candidate '" + targetCandidateId + "' to lead", () -> {
			this.store.forceLeader(this.group, targetCandidateId, this.callTimeout);
			return null;
		});
		if (!targetCandidateId.equals(this.candidateId)) {
			dropLocally();
		}
		requestAttempt();
	}

	@Override
	public void forceReelection() {
		callStore("force a re-election", () -> {
			this.store.clear(this.group, this.callTimeout);
			return null;
		});
		dropLocally();
		requestAttempt();
	}

	/**
	 * The store no longer names this instance: stop believing now rather than at the next
	 * renewal.
	 */
	private synchronized void dropLocally() {
		if (believed() != null) {
			transition(null, RevocationReason.FORCED_ELSEWHERE);
		}
		this.held = null;
		this.releasing = null; // the store names another holder: nothing of ours to
								// release
	}

	// Lifecycle, driven by the engine

	synchronized void start() {
		if (this.started || this.stopped) {
			return;
		}
		this.started = true;
		this.startedNanos = now();
		// The first look at the lease is a round's, taken at once: a node starting with
		// many groups reads and takes them in a few requests, not one each.
		this.inRounds = true;
		this.runtime.executeStoreTask(this::joinAndWatch);
		logger.debug("Joined the election of group '{}' as candidate '{}'", this.group, this.candidateId);
		requestAttempt();
	}

	/**
	 * Stops competing and stops believing; the lease stays in the store until
	 * {@link #leaveAfterStop(boolean)}.
	 */
	void stop() {
		AutoCloseable openWatch;
		synchronized (this) {
			if (this.stopped) {
				return;
			}
			this.stopped = true;
			cancel(this.nextAttempt);
			cancel(this.deadlineCheck);
			if (believed() != null) {
				transition(null, RevocationReason.SHUTDOWN);
			}
			openWatch = this.watch;
			this.watch = null;
		}
		// Outside the lock: closing a watch is a store call, which may take its time.
		if (openWatch != null) {
			closeWatch(openWatch);
		}
	}

	/**
	 * Joins the group in the store and starts watching it, on a store thread of its own:
	 * a store may queue the candidate and open a connection to watch, and that must hold
	 * up neither the caller of {@link #start()}, nor the election (which polls meanwhile,
	 * unless the engine has a single store thread), nor anyone waiting for this elector's
	 * lock.
	 */
	private void joinAndWatch() {
		try {
			joinAndStartWatching();
		}
		finally {
			this.joinTried = true;
		}
	}

	private void joinAndStartWatching() {
		synchronized (this) {
			if (this.stopped) {
				return;
			}
		}
		try {
			this.store.join(this.group, this.candidateId, this.callTimeout);
		}
		catch (Exception ex) {
			// The store keeps the candidate and takes its place when it can; meanwhile
			// the candidate still takes a lease it finds free.
			logger.warn("Could not join group '{}' in the {} store yet; the store retries", this.group,
					this.store.backend(), ex);
		}
		AutoCloseable opened;
		try {
			opened = this.store.watch(this.group, this::notified);
		}
		catch (Throwable ex) {
			if (ex instanceof VirtualMachineError error) {
				throw error;
			}
			logger.warn("Could not watch group '{}' in the {} store; relying on polling every {}", this.group,
					this.store.backend(), this.runtime.timing().retryPeriod(), ex);
			return;
		}
		boolean keep;
		boolean holding;
		synchronized (this) {
			keep = !this.stopped;
			holding = this.held != null;
			if (keep) {
				this.watch = opened;
			}
		}
		if (!keep) {
			closeWatch(opened); // stopped while the watch was being set up
		}
		else if (!holding) {
			// A change between the attempts so far and the watch's start went unheard;
			// and a store that queues candidates (ZooKeeper) queues a watching one. (A
			// holder's next look is its renewal, which sees any change.)
			requestAttempt();
		}
	}

	private void closeWatch(AutoCloseable openWatch) {
		try {
			openWatch.close();
		}
		catch (Exception ex) {
			logger.debug("Could not stop watching group '{}'", this.group, ex);
		}
	}

	/**
	 * Leaves the group in the store once stopped: releases the lease, if it still holds
	 * one and {@code release} is on, so that a follower takes over at its next attempt
	 * instead of after the lease runs out, then gives up its place in the store's queue.
	 */
	void leaveAfterStop(boolean release) {
		Lease lease;
		synchronized (this) {
			lease = (this.held != null) ? this.held : this.releasing;
			this.held = null;
			this.releasing = null;
		}
		if (release && lease != null) {
			release(lease);
		}
		try {
			this.store.leave(this.group, this.candidateId, this.callTimeout);
		}
		catch (Exception ex) {
			logger.debug("Could not leave group '{}' in the {} store; its place ends with the connection", this.group,
					this.store.backend(), ex);
		}
	}

	private void release(Lease lease) {
		try {
			this.store.release(lease, this.callTimeout);
			logger.debug("Released the lease of group '{}' (term {})", this.group, lease.term());
		}
		catch (Exception ex) {
			logger.warn("Could not release the lease of group '{}' (term {}); another candidate takes over when it "
					+ "expires", this.group, lease.term(), ex);
		}
	}

	// The attempt loop

	/**
	 * Asks for a look at the lease now (a notification, a start, an administrator's
	 * change). A follower whose next step is the node's round asks the rounds for a look
	 * soon, which reads and takes the leases of all the groups asking at once; otherwise
	 * this elector attempts on its own.
	 */
	void requestAttempt() {
		this.attemptRequested = true;
		if (looksInRounds()) {
			this.rounds.lookSoon(this);
			return;
		}
		if (this.attemptRunning.compareAndSet(false, true)) {
			boolean renews;
			synchronized (this) {
				renews = this.held != null && this.releasing == null;
			}
			if (!(renews ? this.runtime.executeRenewal(this::runAttempts)
					: this.runtime.executeStoreTask(this::runAttempts))) {
				this.attemptRunning.set(false);
			}
		}
	}

	private void runAttempts() {
		try {
			while (this.attemptRequested && isActive()) {
				this.attemptRequested = false;
				long delay = this.retryPeriodNanos;
				try {
					delay = attemptSafely();
				}
				finally {
					// Even an Error thrown through the attempt leaves the next one
					// scheduled.
					scheduleAttempt(delay);
				}
			}
		}
		finally {
			this.attemptRunning.set(false);
		}
		if (this.attemptRequested && isActive()) {
			requestAttempt();
		}
	}

	private synchronized boolean isActive() {
		return this.started && !this.stopped;
	}

	/** When this instance was granted the leadership it holds now. */
	synchronized long grantedNanos() {
		return this.grantedNanos;
	}

	/** Whether this elector has started and not stopped. */
	boolean isCompeting() {
		return isActive();
	}

	/**
	 * Whether this elector has joined its group in the store and started watching it, or
	 * tried to: a candidate is ready to take a group that balancing hands it once every
	 * one of its electors has (see {@link Balancer}).
	 */
	boolean hasJoined() {
		return this.joinTried;
	}

	/** Whether the store has answered this elector since it started. */
	boolean hasReachedStore() {
		return this.health.hasAnswered();
	}

	/**
	 * Schedules this elector's next attempt, or leaves its next step to the node's round
	 * ({@link #NEXT_ROUND}).
	 */
	private synchronized void scheduleAttempt(long delayNanos) {
		if (this.stopped) {
			return;
		}
		cancel(this.nextAttempt);
		this.nextAttempt = null;
		long delay = delayNanos;
		if (delay == NEXT_ROUND && !roundTakesNextStep()) {
			// A lease to release, or one still waited out, is this elector's own
			// business.
			delay = (this.releasing != null) ? 0
					: Math.max(0, Math.min(this.retryPeriodNanos, this.activeFromNanos - now()));
		}
		this.inRounds = delay == NEXT_ROUND;
		if (!this.inRounds) {
			this.nextAttempt = this.runtime.schedule(this::requestAttempt, delay);
		}
	}

	/**
	 * Whether this elector follows, with its next look left to the node's rounds.
	 */
	private synchronized boolean looksInRounds() {
		return this.inRounds && this.started && !this.stopped && this.held == null && this.releasing == null;
	}

	/**
	 * Whether the node's rounds know this elector's next regular step: renewing the lease
	 * it believes in, or looking at the lease of a group it follows.
	 */
	private boolean roundTakesNextStep() {
		return this.releasing == null && (this.held == null || believed() != null);
	}

	// The node's rounds (see NodeRounds)

	/**
	 * This elector's part in a renewal round sent at the given instant: the lease it
	 * believes in, unless its next step is its own or the belief is over.
	 */
	synchronized @Nullable RoundRenewal renewalForRound(long start) {
		if (!this.inRounds || !this.started || this.stopped || this.attemptRunning.get()) {
			return null;
		}
		Belief current = believed();
		Lease lease = this.held;
		if (current == null || lease == null || this.releasing != null || !current.isHeldAt(start)) {
			// A belief past its deadline is ended by the deadline check, not renewed.
			return null;
		}
		this.roundCallPending = true;
		return new RoundRenewal(lease, current, start);
	}

	/**
	 * Whether a read round looks at this group: it follows the group, with no step of its
	 * own scheduled.
	 */
	synchronized boolean followsInRound() {
		boolean follows = looksInRounds() && !this.attemptRunning.get();
		if (follows) {
			this.roundCallPending = true;
			// This read answers any look asked for so far. (An elector left out because
			// its attempt is running keeps the request: the attempt asks again when it
			// ends.)
			this.attemptRequested = false;
		}
		return follows;
	}

	/**
	 * What a read round found: the group's lease, or null if it was never led.
	 * @return whether this candidate is to take the lease now, in the round's
	 * {@link LeaseStore#tryAcquireAll acquisition}
	 */
	boolean readInRound(@Nullable Lease lease) {
		synchronized (this) {
			this.roundCallPending = false;
		}
		recovered();
		observe(lease);
		noteOwnIdElsewhere(lease, false);
		synchronized (this) {
			if (lease != null && !lease.isAcquirableBy(this.candidateId)) {
				// Led: the next time it is free, balancing's hold-back starts afresh.
				this.freeSinceNanos = 0;
				return false;
			}
			if (!this.inRounds || this.stopped || this.held != null || this.duplicateId.conflict() != null) {
				return false;
			}
			long look = this.stayOut.nextLook(now(), this.retryPeriodNanos);
			if (look == StayOut.NOT_NOW) {
				return false; // the next round looks again
			}
			if (look > 0) {
				scheduleAttempt(look);
				return false;
			}
		}
		long heldBack = heldBackForBalance(lease);
		if (heldBack > 0) {
			scheduleAttempt(heldBack); // tried again the moment the hold-back ends
			return false;
		}
		return true;
	}

	/**
	 * Lets a round take this group's lease in its acquisition: claims the elector as an
	 * attempt would, so that no attempt of its own runs meanwhile, unless one already
	 * does or the lease is no longer this elector's to take.
	 * @return whether the round may take the lease; if so, {@link #acquiredInRound} or
	 * {@link #acquireFailedInRound} follows
	 */
	synchronized boolean claimForRoundAcquire() {
		return looksInRounds() && this.attemptRunning.compareAndSet(false, true);
	}

	/**
	 * What the round's acquisition did for this group.
	 * @param taken the lease taken, or null if another candidate holds it
	 * @param start when the acquisition was sent
	 * @param end when it was answered
	 */
	void acquiredInRound(@Nullable Lease taken, long start, long end) {
		long delay = this.retryPeriodNanos;
		try {
			recovered();
			delay = afterAcquire(taken, start, end);
			if (taken != null) {
				// The acquisition was the look asked for meanwhile (when the watch
				// started, say): the lease is known as of now, and a leader's next look
				// is its renewal. Otherwise every group taken at start would be renewed
				// once more on its own.
				this.attemptRequested = false;
			}
		}
		finally {
			endRoundClaim(delay);
		}
	}

	/** The round's acquisition failed. */
	void acquireFailedInRound(Throwable ex) {
		long delay = this.retryPeriodNanos;
		try {
			failed(ex);
			delay = retryDelayAfterFailure();
		}
		finally {
			endRoundClaim(delay);
		}
	}

	private void endRoundClaim(long delay) {
		try {
			scheduleAttempt(delay);
		}
		finally {
			this.attemptRunning.set(false);
		}
		if (this.attemptRequested && isActive()) {
			requestAttempt();
		}
	}

	/** A round's store call for this group failed. */
	void roundFailed(Throwable ex) {
		synchronized (this) {
			this.roundCallPending = false;
		}
		failed(ex);
		scheduleAttempt(retryDelayAfterFailure());
	}

	/**
	 * This elector's lease in a renewal round, and what the round's outcome does to it.
	 */
	final class RoundRenewal {

		private final Lease lease;

		private final Belief before;

		private final long start;

		private @Nullable Lost lost;

		RoundRenewal(Lease lease, Belief before, long start) {
			this.lease = lease;
			this.before = before;
			this.start = start;
		}

		Lease lease() {
			return this.lease;
		}

		GroupElector elector() {
			return GroupElector.this;
		}

		/** The store extended the lease. */
		void renewed() {
			synchronized (GroupElector.this) {
				GroupElector.this.roundCallPending = false;
			}
			recovered();
			scheduleAttempt(GroupElector.this.renewed(this.lease, this.before, this.start));
		}

		/**
		 * The store refused: stops believing at once. {@link #lostAs} follows, with the
		 * lease as read after the round.
		 * @return whether the group is to be read to learn why
		 */
		boolean refused() {
			synchronized (GroupElector.this) {
				GroupElector.this.roundCallPending = false;
			}
			recovered();
			this.lost = loseLocally(this.lease);
			return this.lost != null;
		}

		/** Revokes the belief that {@link #refused()} ended, with the store's reason. */
		void lostAs(@Nullable Lease now) {
			if (this.lost != null) {
				scheduleAttempt(afterLost(this.lost, now));
			}
		}

	}

	/**
	 * Runs one attempt; no exception ever leaves it, so nothing a store does can stop the
	 * election.
	 * @return nanoseconds until the next attempt
	 */
	private long attemptSafely() {
		try {
			long delay = attempt();
			recovered();
			return delay;
		}
		catch (Throwable ex) {
			if (ex instanceof VirtualMachineError error) {
				throw error;
			}
			failed(ex);
			return retryDelayAfterFailure();
		}
	}

	/**
	 * When to try again after a failed attempt. A leader retries a failed renewal at
	 * once, then four times per retry period until its deadline: the belief lasts a renew
	 * deadline from the start of the last renewal that succeeded, and waiting a whole
	 * period between tries would throw away up to a period of it, so an outage the leader
	 * could have ridden out would end its leadership. (A failure that hangs is bounded by
	 * the call timeout, so these tries never pile up.) Followers go back to the node's
	 * rounds, so that a store that is down is not pressed harder by them; a lease still
	 * to be released or waited out is tried again a retry period later.
	 */
	private synchronized long retryDelayAfterFailure() {
		if (this.held == null && this.releasing == null) {
			return NEXT_ROUND;
		}
		if (believed() == null || this.releasing != null) {
			return this.retryPeriodNanos;
		}
		return (this.health.consecutiveFailures() <= 1) ? 0 : this.retryPeriodNanos / 4;
	}

	private long attempt() {
		Lease lease;
		Lease toRelease;
		synchronized (this) {
			lease = this.held;
			toRelease = this.releasing;
		}
		if (toRelease != null) {
			this.store.release(toRelease, this.callTimeout);
			boolean requeue;
			synchronized (this) {
				if (this.held == toRelease) {
					this.held = null;
				}
				if (this.releasing == toRelease) {
					this.releasing = null;
				}
				requeue = this.requeueAfterRelease;
				this.requeueAfterRelease = false;
			}
			if (requeue) {
				requeue();
			}
			return NEXT_ROUND;
		}
		return (lease != null) ? renew(lease) : acquire();
	}

	/**
	 * Renews on its own: a lease still waited out before it is acted on, or a believed
	 * one whose renewal in the round failed.
	 */
	private long renew(Lease lease) {
		long start = now();
		Belief before;
		synchronized (this) {
			before = believed();
		}
		if (before != null && !before.isHeldAt(start)) {
			// Paused or starved past the deadline: the belief is over whatever the store
			// says.
			expire(before, false);
			return 0;
		}
		boolean renewed = this.store.renew(lease, this.runtime.timing().leaseDuration(), this.callTimeout);
		if (!renewed) {
			return lost(lease);
		}
		return renewed(lease, before, start);
	}

	/**
	 * Turns a renewal that succeeded into belief: extends the belief it renewed, or
	 * grants a lease that was waited out.
	 * @param before the belief when the renewal was sent, or null
	 * @param start when the renewal was sent
	 * @return the delay until this elector's next attempt, or {@link #NEXT_ROUND}
	 */
	private long renewed(Lease lease, @Nullable Belief before, long start) {
		synchronized (this) {
			if (this.held != lease || this.stopped) {
				return NEXT_ROUND; // forced or stopped while renewing
			}
			if (this.releasing == lease) {
				// Yielded while the renewal was on its way: a lease that is to be
				// released
				// is never granted or extended, or the release would leave a belief with
				// no lease behind it.
				return 0;
			}
			Belief current = believed();
			if (before != null) {
				if (current != before) {
					// The deadline passed during the call and leadership was revoked: the
					// lease is released (see expire), and a new grant needs a new term.
					return 0;
				}
				if (!current.isHeldAt(now())) {
					// The deadline passed during the call, but its check has not run yet
					// (it waits for this lock, or for a busy thread): the belief ended
					// then, and isLeader() has said so since. A term that ended never
					// comes back, whatever the store answered: ended here as the check
					// would end it.
					expire(current, true);
					return 0;
				}
				transition(new Belief(current.leadership, start + this.renewDeadlineNanos), null);
				return NEXT_ROUND;
			}
			long untilActive = this.activeFromNanos - start;
			if (untilActive <= 0) {
				return grantUnlessTooLate(lease, start) ? NEXT_ROUND : 0;
			}
			return Math.min(this.retryPeriodNanos, untilActive);
		}
	}

	private long lost(Lease lease) {
		Lost lostLease = loseLocally(lease);
		if (lostLease == null) {
			return NEXT_ROUND;
		}
		Lease now = null;
		try {
			now = this.store.read(this.group, this.callTimeout).orElse(null);
		}
		catch (Exception ex) {
			logger.debug("Could not read group '{}' after losing its lease", this.group, ex);
		}
		return afterLost(lostLease, now);
	}

	/**
	 * The store refused to renew: stops believing at once, before asking the store why.
	 * @return what was lost, or null if the lease was no longer held here anyway
	 */
	private synchronized @Nullable Lost loseLocally(Lease lease) {
		if (this.held != lease) {
			return null;
		}
		this.held = null;
		Belief lostBelief = believed();
		if (lostBelief != null) {
			// The revocation, with the reason the store gives, follows.
			lostBelief.end();
		}
		return new Lost(lostBelief);
	}

	/**
	 * Revokes a lost belief with the reason the store gives: the lease as read after the
	 * renewal was refused, or null if unknown or never led.
	 */
	private long afterLost(Lost lost, @Nullable Lease now) {
		Belief lostBelief = lost.belief();
		noteOwnIdElsewhere(now, true);
		if (lostBelief != null) {
			// Another holder, or none, before our deadline: only an administrator does
			// that. A store
			// that still names us refused for its own reasons (a suspended ZooKeeper
			// session, say).
			boolean forced = now != null && !now.isHeldBy(this.candidateId);
			RevocationReason reason = forced ? RevocationReason.FORCED_ELSEWHERE : RevocationReason.LEASE_LOST;
			synchronized (this) {
				if (this.belief == lostBelief) {
					transition(null, reason);
				}
			}
		}
		observe(now);
		// A follower now, on a follower's schedule: a store that keeps refusing renewals
		// while it names this candidate must not make it take the lease again and lose
		// it again at once, over and over (a reconnect, say, still wakes it at once).
		return NEXT_ROUND;
	}

	private long acquire() {
		Lease current = this.store.read(this.group, this.callTimeout).orElse(null);
		observe(current);
		noteOwnIdElsewhere(current, false);
		synchronized (this) {
			if (this.stopped || this.held != null) {
				return NEXT_ROUND;
			}
			if (this.duplicateId.conflict() != null) {
				return NEXT_ROUND;
			}
			long look = this.stayOut.nextLook(now(), this.retryPeriodNanos);
			if (look != 0) {
				return (look == StayOut.NOT_NOW) ? NEXT_ROUND : look;
			}
		}
		if (current != null && !current.isAcquirableBy(this.candidateId)) {
			synchronized (this) {
				this.freeSinceNanos = 0;
			}
			return NEXT_ROUND;
		}
		long heldBack = heldBackForBalance(current);
		if (heldBack > 0) {
			return heldBack; // tried again the moment the hold-back ends
		}
		long start = now();
		Optional<Lease> taken = this.store.tryAcquire(this.group, this.candidateId,
				this.runtime.timing().leaseDuration(), this.callTimeout);
		return afterAcquire(taken.orElse(null), start, now());
	}

	/**
	 * Turns a lease taken into belief, at once or once the previous holder's lease is
	 * surely over.
	 * @param taken the lease taken, or null if another candidate holds it
	 * @param start when the acquisition was sent
	 * @param end when it was answered
	 * @return the delay until this elector's next attempt, or {@link #NEXT_ROUND}
	 */
	private long afterAcquire(@Nullable Lease taken, long start, long end) {
		if (taken == null) {
			return NEXT_ROUND;
		}
		Lease lease = taken;
		if (this.balancing != null) {
			this.balancing.acquired();
		}
		boolean stoppedMeanwhile;
		synchronized (this) {
			this.freeSinceNanos = 0;
			this.duplicateId.acquired(lease.term());
			stoppedMeanwhile = this.stopped;
			if (!stoppedMeanwhile) {
				this.held = lease;
				// A lease still to release is older, and this new term has replaced it in
				// the store.
				this.releasing = null;
				long untilActive = lease.activeIn().toNanos();
				if (untilActive <= 0) {
					return grantUnlessTooLate(lease, start) ? NEXT_ROUND : 0;
				}
				// Taken over before the previous lease ran out: wait until it surely has,
				// measured
				// from the end of our request, then grant on a renewal that starts after
				// that.
				this.activeFromNanos = end + untilActive;
				logger.debug("Took the lease of group '{}' (term {}); acting in {} ms once the previous lease is over",
						this.group, lease.term(), lease.activeIn().toMillis());
				return Math.min(this.retryPeriodNanos, untilActive);
			}
		}
		release(lease);
		return NEXT_ROUND;
	}

	/**
	 * Whether to leave a lease that is free to take to another candidate for now, as
	 * balancing asks (see {@link Balancer#holdsBack}): only a lease that was released (a
	 * hand-over), never one that ran out (its holder crashed or was cut off: that is a
	 * failover, which must not wait), and for at most one retry period after this elector
	 * first saw it free.
	 */
	private long heldBackForBalance(@Nullable Lease free) {
		Balancing balancer = this.balancing;
		if (balancer == null || free == null || free.holder() != null) {
			return 0;
		}
		long freeSince;
		synchronized (this) {
			if (this.freeSinceNanos == 0) {
				this.freeSinceNanos = now();
			}
			freeSince = this.freeSinceNanos;
		}
		if (!balancer.holdsBack(this, freeSince)) {
			return 0;
		}
		return Math.max(0, freeSince + this.retryPeriodNanos - now());
	}

	/**
	 * Looks at the lease again now if this follower last saw it released, as balancing
	 * may hold it back: the balancer has just listed the live candidates again, and the
	 * candidate it held the group back for may be gone.
	 */
	void lookAgainIfSeenFree() {
		synchronized (this) {
			if (this.freeSinceNanos == 0 || this.held != null || !isActive()) {
				return;
			}
		}
		requestAttempt();
	}

	/**
	 * See {@link DuplicateIdDetector}: logs outside the lock what it found.
	 * @param displaced whether the lease was read because a renewal was refused
	 */
	private void noteOwnIdElsewhere(@Nullable Lease lease, boolean displaced) {
		DuplicateIdDetector.Finding finding;
		synchronized (this) {
			finding = this.duplicateId.observe(lease, now(), displaced);
		}
		if (finding == DuplicateIdDetector.Finding.CONFLICT_ENDED) {
			logger.warn("Candidate '{}' competes for group '{}' again: no other process holds its lease under this "
					+ "candidate id any more", this.candidateId, this.group);
		}
		else if (finding == DuplicateIdDetector.Finding.CONFLICT_STARTED && lease != null) {
			logger.error("Candidate id '{}' is used by another live process: it took the lease of group '{}' under "
					+ "this id in term {}, which this process never acquired (its last term was {}). Two processes "
					+ "with one id take the lease from each other and neither leads, so this one stops competing for "
					+ "the group until that lease is gone. Give every instance its own leader-election.candidate-id, "
					+ "or leave it unset (the default, host name, process id and a random suffix, is unique).",
					this.candidateId, this.group, lease.term(), this.duplicateId.highestOwnTerm());
		}
	}

	// Transitions: each runs with the lock held and turns a change into events

	/**
	 * Grants on a call that started at the given instant, unless the call took the whole
	 * renew deadline: the belief it would start is then over before it begins, and a
	 * grant would tell the listeners of a leadership that never was (granted, then
	 * revoked at once). The lease is given up instead, as by a leader whose store stopped
	 * answering in time, so that a candidate with a faster link gets the first try.
	 * @return whether leadership was granted
	 */
	private boolean grantUnlessTooLate(Lease lease, long requestStart) {
		long now = now();
		if (now - requestStart < this.renewDeadlineNanos) {
			grant(lease, requestStart);
			return true;
		}
		logger.warn("Not leading group '{}' in term {}: the store took {} ms to answer, longer than the renew "
				+ "deadline; giving the lease up", this.group, lease.term(), (now - requestStart) / 1_000_000);
		this.releasing = lease;
		this.stayOut.start(now(), this.retryPeriodNanos, lease.term());
		return false;
	}

	/**
	 * After a hand-over, takes this candidate's place in the store's queue again at its
	 * end (on stores that queue candidates, ZooKeeper): the lease goes to whoever is next
	 * in line, and a hand-over must go to another candidate, not back to this one.
	 */
	private void requeue() {
		try {
			this.store.leave(this.group, this.candidateId, this.callTimeout);
			this.store.join(this.group, this.candidateId, this.callTimeout);
		}
		catch (Exception ex) {
			logger.debug("Could not queue again at the end of group '{}' after handing it over; the store retries",
					this.group, ex);
		}
	}

	private void grant(Lease lease, long requestStart) {
		Leadership leadership = new Leadership(this.group, this.candidateId, lease.term(), this::isLeadingInTerm);
		transition(new Belief(leadership, requestStart + this.renewDeadlineNanos), null);
	}

	/**
	 * The one place where this instance's belief changes. Every grant, extension and
	 * revocation goes through here with the lock held, so that the belief, its deadline
	 * check, the log, the listeners' events and the observed leader change together and
	 * in order.
	 * @param to the new belief (a grant, or an extension of the current belief), or null
	 * to end the current belief
	 * @param reason why the current belief ends; null unless {@code to} is null
	 */
	private void transition(@Nullable Belief to, @Nullable RevocationReason reason) {
		Belief from = this.belief;
		this.belief = to;
		if (to != null) {
			scheduleDeadlineCheck(to);
			if (from != null && from.leadership == to.leadership) {
				return; // extended by a renewal
			}
			Leadership leadership = to.leadership;
			this.grantedNanos = now();
			logger.info("Leadership of group '{}' granted to candidate '{}' (term {})", this.group, this.candidateId,
					leadership.term());
			this.runtime.notifier()
				.publish(this.group, "granted " + leadership, (listener) -> listener.granted(leadership));
			setObserved(new LeaderInfo(this.group, this.candidateId, leadership.term()));
			return;
		}
		cancel(this.deadlineCheck);
		if (from == null) {
			return;
		}
		RevocationReason why = Objects.requireNonNull(reason, "reason");
		Leadership leadership = from.leadership;
		logger.info("Leadership of group '{}' revoked from candidate '{}' (term {}): {}", this.group, this.candidateId,
				leadership.term(), why);
		this.runtime.notifier()
			.publish(this.group, "revoked " + leadership, (listener) -> listener.revoked(leadership, why));
		setObserved(null);
	}

	/**
	 * The current belief, unless it has ended and its revocation is on its way (see
	 * {@link #lost}): then nothing is believed, and nobody but the one ending it revokes
	 * it.
	 */
	private @Nullable Belief believed() {
		Belief current = this.belief;
		return (current != null && !current.ended) ? current : null;
	}

	/**
	 * Ends a belief whose deadline passed: a store error if renewals failed or one is
	 * still hanging, otherwise the lease is lost (the process was paused or starved).
	 */
	private synchronized void expire(Belief expected, boolean storeCallPending) {
		if (believed() != expected) {
			return;
		}
		boolean storeTrouble = this.health.consecutiveFailures() > 0 || storeCallPending;
		transition(null, storeTrouble ? RevocationReason.STORE_ERROR : RevocationReason.LEASE_LOST);
		if (this.held != null) {
			// Give up the place as well as the belief. Over a slow link, calls that this
			// side gave up on still reach the store and keep the lease alive there (a
			// late renewal, a ZooKeeper session that still pings), and nobody else could
			// lead for as long as the link stays slow. The release is one more such call:
			// it lands even if its answer comes too late.
			this.releasing = this.held;
			if (storeTrouble) {
				// The others, whose links work, get the first try.
				this.stayOut.start(now(), this.retryPeriodNanos, this.held.term());
			}
		}
	}

	private void scheduleDeadlineCheck(Belief current) {
		cancel(this.deadlineCheck);
		long delay = current.deadline - now();
		this.deadlineCheck = this.runtime.schedule(() -> checkDeadline(current), Math.max(0, delay));
	}

	/**
	 * Delivers the revocation when the deadline passes, even while a store call hangs.
	 */
	private void checkDeadline(Belief expected) {
		synchronized (this) {
			if (believed() != expected) {
				return;
			}
			if (expected.isHeldAt(now())) {
				scheduleDeadlineCheck(expected);
				return;
			}
			expire(expected, this.attemptRunning.get() || this.roundCallPending);
		}
		requestAttempt();
	}

	private void observe(@Nullable Lease lease) {
		LeaderInfo leader = (lease != null && lease.hasLiveHolder()) ? toLeaderInfo(lease) : null;
		synchronized (this) {
			if (believed() == null || leader != null) {
				setObserved(leader);
			}
			if (lease != null) {
				this.stayOut.sawTerm(lease.term());
			}
		}
	}

	private void setObserved(@Nullable LeaderInfo leader) {
		if (Objects.equals(this.observed, leader)) {
			return;
		}
		this.observed = leader;
		this.runtime.notifier()
			.publish(this.group, "leader changed in " + this.group,
					(listener) -> listener.leaderChanged(this.group, leader));
	}

	private LeaderInfo toLeaderInfo(Lease lease) {
		return new LeaderInfo(this.group, lease.holder(), lease.term());
	}

	private void failed(Throwable ex) {
		this.health.failed(ex);
	}

	private void recovered() {
		this.health.answered(now());
	}

	/** A snapshot for health checks and endpoints; no I/O. */
	synchronized ElectionStatus status() {
		long now = now();
		Belief current = this.belief;
		Optional<Duration> beliefRemaining = (current != null && current.isHeldAt(now))
				? Optional.of(Duration.ofNanos(current.deadline - now)) : Optional.empty();
		return new ElectionStatus(this.group, this.candidateId, beliefRemaining.isPresent(),
				Optional.ofNullable(this.observed), beliefRemaining, this.health.sinceAnswered(now),
				this.health.consecutiveFailures(), this.store.backend(),
				Optional.ofNullable(this.duplicateId.conflict()), phase(now));
	}

	/** Where this group's election stands at the given instant. Guarded by this. */
	private GroupPhase phase(long now) {
		if (this.stopped) {
			return GroupPhase.STOPPED;
		}
		if (!this.started) {
			return GroupPhase.NOT_STARTED;
		}
		if (this.releasing != null) {
			return GroupPhase.RELEASING;
		}
		Belief current = this.belief;
		if (current != null) {
			return current.isHeldAt(now) ? GroupPhase.LEADING : GroupPhase.LOSING;
		}
		if (this.held != null) {
			return GroupPhase.PENDING;
		}
		if (this.duplicateId.conflict() != null) {
			return GroupPhase.STANDING_ASIDE;
		}
		return (this.stayOut.remaining(now) > 0) ? GroupPhase.STAYING_OUT : GroupPhase.FOLLOWING;
	}

	/** Time since this elector started competing, or null before it started. */
	synchronized @Nullable Duration sinceStarted() {
		return this.started ? Duration.ofNanos(now() - this.startedNanos) : null;
	}

	private <T> T callStore(String operation, Callable<T> call) {
		try {
			return call.call();
		}
		catch (Exception ex) {
			throw new LeaderElectionException("Could not " + operation + " in group '" + this.group + "' ("
					+ this.store.backend() + " store): " + ex.getMessage(), ex);
		}
	}

	/** A store notification: try at once. */
	private void notified() {
		requestAttempt();
	}

	private long now() {
		return this.runtime.nanoTime();
	}

	private static void cancel(@Nullable Future<?> future) {
		if (future != null) {
			future.cancel(false);
		}
	}

	@Override
	public String toString() {
		return "LeaderElection[group=" + this.group + ", candidateId=" + this.candidateId + ", leader=" + isLeader()
				+ "]";
	}

	/** A lease the store refused to renew, and the belief that ended with it, if any. */
	private record Lost(@Nullable Belief belief) {
	}

	/**
	 * A belief in leadership that holds until a deadline on the monotonic clock, or until
	 * it is ended sooner.
	 */
	private static final class Belief {

		final Leadership leadership;

		final long deadline;

		/** Set once, when the store said the lease is gone: the belief ends at once. */
		volatile boolean ended;

		Belief(Leadership leadership, long deadline) {
			this.leadership = leadership;
			this.deadline = deadline;
		}

		boolean isHeldAt(long nanoTime) {
			return !this.ended && nanoTime - this.deadline < 0;
		}

		void end() {
			this.ended = true;
		}

	}

	/** What an elector asks of the node's rounds. */
	interface Rounds {

		/**
		 * Looks at this follower's lease soon, in a round that reads and takes the leases
		 * of every group asking at once.
		 */
		void lookSoon(GroupElector elector);

	}

	/** What an elector asks of balancing; see {@link Balancer}. */
	interface Balancing {

		/** This node took a group: counted until the next round recounts. */
		void acquired();

		/**
		 * Whether to leave a group seen released to another candidate for now; if so, the
		 * balancer may list the live candidates again and then have the elector
		 * {@linkplain GroupElector#lookAgainIfSeenFree look again}.
		 * @param freeSinceNanos when this node first saw it released
		 */
		boolean holdsBack(GroupElector elector, long freeSinceNanos);

	}

}
