package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.LeaderInfo;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.engine.GroupMachine.Effect;
import io.github.leaderelection.engine.GroupMachine.Event;
import io.github.leaderelection.engine.GroupMachine.Next;
import io.github.leaderelection.engine.GroupMachine.Step;
import io.github.leaderelection.engine.GroupState.Belief;
import io.github.leaderelection.engine.GroupState.Following;
import io.github.leaderelection.engine.GroupState.Leading;
import io.github.leaderelection.engine.GroupState.Lost;
import io.github.leaderelection.engine.GroupState.NotStarted;
import io.github.leaderelection.engine.GroupState.Pending;
import io.github.leaderelection.engine.GroupState.Releasing;
import io.github.leaderelection.engine.GroupState.Stopped;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The election of one group on this instance: feeds what happens (store answers, timers,
 * commands) to the group's {@link GroupMachine state machine} and carries out what it
 * decides (events for the listeners, store calls, the next step).
 *
 * <p>
 * The state is one volatile {@link GroupState} value, read without a lock by
 * {@link #isLeader()}; it is replaced only in {@link #on}, with this elector's lock held.
 * No store call is ever made with the lock held, so a hung store cannot block readers,
 * the deadline timer or an administrator.
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

	private final String group;

	private final ElectionRuntime runtime;

	private final Rounds rounds;

	/** Null unless balancing. */
	private final @Nullable Balancing balancing;

	private final LeaseStore store;

	private final String candidateId;

	private final long retryPeriodNanos;

	private final Duration callTimeout;

	private final GroupMachine machine;

	private final GroupMembership membership;

	/** Replaced only by {@link #on}. */
	private volatile GroupState state = GroupState.NOT_STARTED;

	/** After a yield, or a lease given up, another candidate gets the first try. */
	private final StayOut stayOut = new StayOut();

	private final StoreHealth health;

	/** Notices another process competing under this candidate id. Guarded by this. */
	private final DuplicateIdDetector duplicateId;

	/** Guarded by this. */
	private @Nullable LeaderInfo observed;

	/** Guarded by this. */
	private long startedNanos = -1;

	/** When this instance was last granted leadership. Guarded by this. */
	private long grantedNanos;

	private @Nullable Future<?> nextAttempt;

	private @Nullable Future<?> deadlineCheck;

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

	private final AtomicBoolean attemptRunning = new AtomicBoolean();

	private volatile boolean attemptRequested;

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
		this.retryPeriodNanos = runtime.timing().retryPeriod().toNanos();
		this.callTimeout = runtime.timing().storeCallTimeout();
		this.machine = new GroupMachine(group, this.candidateId, runtime.timing().renewDeadline().toNanos(),
				this.retryPeriodNanos, this::isLeadingInTerm);
		this.membership = new GroupMembership(group, this.candidateId, this.store, this.callTimeout,
				runtime.timing().retryPeriod());
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
		return this.state instanceof Leading leading && leading.belief().isHeldAt(now());
	}

	@Override
	public Optional<Leadership> leadership() {
		return (this.state instanceof Leading leading && leading.belief().isHeldAt(now()))
				? Optional.of(leading.belief().leadership()) : Optional.empty();
	}

	private boolean isLeadingInTerm(long term) {
		return this.state instanceof Leading leading && leading.belief().leadership().term() == term
				&& leading.belief().isHeldAt(now());
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
			wasLeading = isLeader();
			on(new Event.GiveUp(reason));
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
			synchronized (this) {
				on(new Event.ForcedElsewhere());
			}
		}
		requestAttempt();
	}

	@Override
	public void forceReelection() {
		callStore("force a re-election", () -> {
			this.store.clear(this.group, this.callTimeout);
			return null;
		});
		synchronized (this) {
			on(new Event.ForcedElsewhere());
		}
		requestAttempt();
	}

	// Lifecycle, driven by the engine

	void start() {
		synchronized (this) {
			if (!(this.state instanceof NotStarted)) {
				return;
			}
			on(new Event.Start());
			this.startedNanos = now();
			// The first look at the lease is a round's, taken at once: a node starting
			// with many groups reads and takes them in a few requests, not one each.
			this.inRounds = true;
		}
		this.runtime.executeStoreTask(() -> this.membership.joinAndWatch(this::requestAttempt, this::holdsLease));
		logger.debug("Joined the election of group '{}' as candidate '{}'", this.group, this.candidateId);
		requestAttempt();
	}

	/**
	 * Stops competing and stops believing; the lease stays in the store until
	 * {@link #leaveAfterStop(boolean)}.
	 */
	void stop() {
		synchronized (this) {
			if (this.state instanceof Stopped) {
				return;
			}
			on(new Event.Stop());
			cancel(this.nextAttempt);
		}
		this.membership.stopWatching();
	}

	/**
	 * Leaves the group in the store once stopped: releases the lease, if it still holds
	 * one and {@code release} is on, so that a follower takes over at its next attempt
	 * instead of after the lease runs out, then gives up its place in the store's queue.
	 */
	void leaveAfterStop(boolean release) {
		Lease lease = null;
		synchronized (this) {
			if (this.state instanceof Stopped stopped) {
				lease = stopped.lease();
				this.state = new Stopped(null);
			}
		}
		if (release && lease != null) {
			release(lease);
		}
		this.membership.leave();
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

	private boolean holdsLease() {
		GroupState current = this.state;
		return current instanceof Leading || current instanceof Pending || current instanceof Releasing;
	}

	/** Whether this elector has started and not stopped. */
	boolean isCompeting() {
		GroupState current = this.state;
		return !(current instanceof NotStarted || current instanceof Stopped);
	}

	/** When this instance was last granted leadership. */
	synchronized long grantedNanos() {
		return this.grantedNanos;
	}

	/**
	 * Whether this elector has joined its group in the store and started watching it, or
	 * tried to; see {@link GroupMembership#hasTried()}.
	 */
	boolean hasJoined() {
		return this.membership.hasTried();
	}

	/** Whether the store has answered this elector since it started. */
	boolean hasReachedStore() {
		return this.health.hasAnswered();
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
			GroupState current = this.state;
			boolean renews = current instanceof Leading || current instanceof Pending;
			if (!(renews ? this.runtime.executeRenewal(this::runAttempts)
					: this.runtime.executeStoreTask(this::runAttempts))) {
				this.attemptRunning.set(false);
			}
		}
	}

	private void runAttempts() {
		try {
			while (this.attemptRequested && isCompeting()) {
				this.attemptRequested = false;
				Next next = Next.after(this.retryPeriodNanos);
				try {
					next = attemptSafely();
				}
				finally {
					// Even an Error thrown through the attempt leaves the next one
					// scheduled.
					scheduleAttempt(next);
				}
			}
		}
		finally {
			this.attemptRunning.set(false);
		}
		if (this.attemptRequested && isCompeting()) {
			requestAttempt();
		}
	}

	/**
	 * Schedules this elector's next attempt, or leaves its next step to the node's round.
	 * A lease to release, or one still waited out, is this elector's own business.
	 */
	private synchronized void scheduleAttempt(Next next) {
		GroupState current = this.state;
		if (current instanceof Stopped) {
			return;
		}
		cancel(this.nextAttempt);
		this.nextAttempt = null;
		long delay = next.delayNanos();
		boolean round = next.round();
		if (round && current instanceof Releasing) {
			round = false;
			delay = 0;
		}
		else if (round && current instanceof Pending pending) {
			round = false;
			delay = Math.max(0, Math.min(this.retryPeriodNanos, pending.activeFromNanos() - now()));
		}
		this.inRounds = round;
		if (!round) {
			this.nextAttempt = this.runtime.schedule(this::requestAttempt, delay);
		}
	}

	/** Whether this elector follows, with its next look left to the node's rounds. */
	private synchronized boolean looksInRounds() {
		GroupState current = this.state;
		return this.inRounds && (current instanceof Following || current instanceof Lost);
	}

	/**
	 * Runs one attempt; no exception ever leaves it, so nothing a store does can stop the
	 * election.
	 */
	private Next attemptSafely() {
		try {
			Next next = attempt();
			recovered();
			return next;
		}
		catch (Throwable ex) {
			if (ex instanceof VirtualMachineError error) {
				throw error;
			}
			return failed(ex);
		}
	}

	private Next attempt() {
		GroupState current = this.state;
		if (current instanceof Releasing releasing) {
			this.store.release(releasing.lease(), this.callTimeout);
			Step step;
			synchronized (this) {
				step = on(new Event.Released(releasing.lease()));
			}
			if (step.has(Effect.Requeue.class)) {
				this.membership.requeue();
			}
			return step.next();
		}
		if (current instanceof Leading leading) {
			return renew(leading.lease(), leading.belief());
		}
		if (current instanceof Pending pending) {
			return renew(pending.lease(), null);
		}
		return (current instanceof Following || current instanceof Lost) ? acquire() : Next.ROUND;
	}

	/**
	 * Renews on its own: a lease still waited out before it is acted on, or a believed
	 * one whose renewal in the round failed.
	 * @param before the belief the renewal is to extend, or null while pending
	 */
	private Next renew(Lease lease, @Nullable Belief before) {
		long start = now();
		if (before != null && !before.isHeldAt(start)) {
			// Paused or starved past the deadline: the belief is over whatever the store
			// says.
			synchronized (this) {
				on(new Event.DeadlinePassed(before, this.health.consecutiveFailures() > 0, start));
			}
			return Next.NOW;
		}
		if (!this.store.renew(lease, this.runtime.timing().leaseDuration(), this.callTimeout)) {
			return lost(lease);
		}
		return renewed(lease, before, start);
	}

	private synchronized Next renewed(Lease lease, @Nullable Belief before, long start) {
		return on(new Event.Renewed(lease, before, start, now())).next();
	}

	private Next lost(Lease lease) {
		synchronized (this) {
			if (!on(new Event.Refused(lease)).has(Effect.ReadWhy.class)) {
				return Next.ROUND;
			}
		}
		Lease now = null;
		try {
			now = this.store.read(this.group, this.callTimeout).orElse(null);
		}
		catch (Exception ex) {
			logger.debug("Could not read group '{}' after losing its lease", this.group, ex);
		}
		return lostAs(now);
	}

	/**
	 * Revokes a belief lost to a refused renewal, with the reason the store gives: the
	 * lease as read after the refusal, or null if unknown or never led.
	 */
	private Next lostAs(@Nullable Lease now) {
		noteOwnIdElsewhere(now, true);
		Next next;
		synchronized (this) {
			next = on(new Event.LostAs(now)).next();
		}
		observe(now);
		return next;
	}

	private Next acquire() {
		Lease current = this.store.read(this.group, this.callTimeout).orElse(null);
		observe(current);
		noteOwnIdElsewhere(current, false);
		synchronized (this) {
			GroupState now = this.state;
			if (!(now instanceof Following || now instanceof Lost) || this.duplicateId.conflict() != null) {
				return Next.ROUND;
			}
			long look = this.stayOut.nextLook(now(), this.retryPeriodNanos);
			if (look != 0) {
				return (look == StayOut.NOT_NOW) ? Next.ROUND : Next.after(look);
			}
		}
		if (current != null && !current.isAcquirableBy(this.candidateId)) {
			synchronized (this) {
				this.freeSinceNanos = 0;
			}
			return Next.ROUND;
		}
		long heldBack = heldBackForBalance(current);
		if (heldBack > 0) {
			return Next.after(heldBack); // tried again the moment the hold-back ends
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
	 */
	private Next afterAcquire(@Nullable Lease taken, long start, long end) {
		if (taken == null) {
			return Next.ROUND;
		}
		if (this.balancing != null) {
			this.balancing.acquired();
		}
		Step step;
		synchronized (this) {
			this.freeSinceNanos = 0;
			this.duplicateId.acquired(taken.term());
			step = on(new Event.Acquired(taken, start, end, now()));
		}
		if (step.has(Effect.Release.class)) {
			release(taken); // taken as the elector stopped
		}
		return step.next();
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
			GroupState current = this.state;
			if (this.freeSinceNanos == 0 || !(current instanceof Following || current instanceof Lost)) {
				return;
			}
		}
		requestAttempt();
	}

	// The node's rounds (see NodeRounds)

	/**
	 * This elector's part in a renewal round sent at the given instant: the lease it
	 * believes in, unless its next step is its own or the belief is over (a belief past
	 * its deadline is ended by the deadline check, not renewed).
	 */
	synchronized @Nullable RoundRenewal renewalForRound(long start) {
		if (!this.inRounds || this.attemptRunning.get() || !(this.state instanceof Leading leading)
				|| !leading.belief().isHeldAt(start)) {
			return null;
		}
		this.roundCallPending = true;
		return new RoundRenewal(leading.lease(), leading.belief(), start);
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
			if (!looksInRounds() || this.duplicateId.conflict() != null) {
				return false;
			}
			long look = this.stayOut.nextLook(now(), this.retryPeriodNanos);
			if (look == StayOut.NOT_NOW) {
				return false; // the next round looks again
			}
			if (look > 0) {
				scheduleAttempt(Next.after(look));
				return false;
			}
		}
		long heldBack = heldBackForBalance(lease);
		if (heldBack > 0) {
			scheduleAttempt(Next.after(heldBack)); // tried again the moment the hold-back
													// ends
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
		Next next = Next.after(this.retryPeriodNanos);
		try {
			recovered();
			next = afterAcquire(taken, start, end);
			if (taken != null) {
				// The acquisition was the look asked for meanwhile (when the watch
				// started, say): the lease is known as of now, and a leader's next look
				// is its renewal. Otherwise every group taken at start would be renewed
				// once more on its own.
				this.attemptRequested = false;
			}
		}
		finally {
			endRoundClaim(next);
		}
	}

	/** The round's acquisition failed. */
	void acquireFailedInRound(Throwable ex) {
		Next next = Next.after(this.retryPeriodNanos);
		try {
			next = failed(ex);
		}
		finally {
			endRoundClaim(next);
		}
	}

	private void endRoundClaim(Next next) {
		try {
			scheduleAttempt(next);
		}
		finally {
			this.attemptRunning.set(false);
		}
		if (this.attemptRequested && isCompeting()) {
			requestAttempt();
		}
	}

	/** A round's store call for this group failed. */
	void roundFailed(Throwable ex) {
		synchronized (this) {
			this.roundCallPending = false;
		}
		scheduleAttempt(failed(ex));
	}

	/**
	 * This elector's lease in a renewal round, and what the round's outcome does to it.
	 */
	final class RoundRenewal {

		private final Lease lease;

		private final Belief before;

		private final long start;

		private boolean readWhy;

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
			recovered();
			synchronized (GroupElector.this) {
				GroupElector.this.roundCallPending = false;
				this.readWhy = on(new Event.Refused(this.lease)).has(Effect.ReadWhy.class);
			}
			return this.readWhy;
		}

		/** Revokes the belief that {@link #refused()} ended, with the store's reason. */
		void lostAs(@Nullable Lease now) {
			if (this.readWhy) {
				scheduleAttempt(GroupElector.this.lostAs(now));
			}
		}

	}

	// Transitions

	/**
	 * The one place where the state changes: feeds an event to the machine and carries
	 * out, with the lock held and in order, what does not call the store (the belief's
	 * deadline check, the log, the listeners' events, the observed leader, a stay-out).
	 * Store calls it asks for are the caller's, once the lock is released.
	 */
	private Step on(Event event) {
		GroupState from = this.state;
		Step step = this.machine.next(from, event);
		this.state = step.state();
		for (Effect effect : step.effects()) {
			if (effect instanceof Effect.Granted granted) {
				announceGranted(granted.leadership());
			}
			else if (effect instanceof Effect.Revoked revoked) {
				announceRevoked(revoked.leadership(), revoked.reason());
			}
			else if (effect instanceof Effect.StayOut stayOut) {
				this.stayOut.start(now(), stayOut.durationNanos(), stayOut.term());
			}
			else if (effect instanceof Effect.AnsweredTooLate late) {
				logger.warn(
						"Not leading group '{}' in term {}: the store took {} ms to answer, longer than the "
								+ "renew deadline; giving the lease up",
						this.group, late.lease().term(), late.tookNanos() / 1_000_000);
			}
		}
		Belief before = (from instanceof Leading leading) ? leading.belief() : null;
		Belief after = (step.state() instanceof Leading leading) ? leading.belief() : null;
		if (after == null) {
			cancel(this.deadlineCheck);
		}
		else if (after != before) {
			scheduleDeadlineCheck(after);
		}
		if (step.state() instanceof Pending pending && !(from instanceof Pending)) {
			logger.debug("Took the lease of group '{}' (term {}); acting once the previous lease is over", this.group,
					pending.lease().term());
		}
		return step;
	}

	private void announceGranted(Leadership leadership) {
		this.grantedNanos = now();
		logger.info("Leadership of group '{}' granted to candidate '{}' (term {})", this.group, this.candidateId,
				leadership.term());
		this.runtime.notifier()
			.publish(this.group, "granted " + leadership, (listener) -> listener.granted(leadership));
		setObserved(new LeaderInfo(this.group, this.candidateId, leadership.term()));
	}

	private void announceRevoked(Leadership leadership, RevocationReason reason) {
		logger.info("Leadership of group '{}' revoked from candidate '{}' (term {}): {}", this.group, this.candidateId,
				leadership.term(), reason);
		this.runtime.notifier()
			.publish(this.group, "revoked " + leadership, (listener) -> listener.revoked(leadership, reason));
		setObserved(null);
	}

	private void scheduleDeadlineCheck(Belief belief) {
		cancel(this.deadlineCheck);
		long delay = belief.deadline() - now();
		this.deadlineCheck = this.runtime.schedule(() -> checkDeadline(belief), Math.max(0, delay));
	}

	/**
	 * Delivers the revocation when the deadline passes, even while a store call hangs.
	 */
	private void checkDeadline(Belief expected) {
		synchronized (this) {
			if (!(this.state instanceof Leading leading) || leading.belief() != expected) {
				return;
			}
			if (expected.isHeldAt(now())) {
				scheduleDeadlineCheck(expected);
				return;
			}
			boolean storeTrouble = this.health.consecutiveFailures() > 0 || this.attemptRunning.get()
					|| this.roundCallPending;
			on(new Event.DeadlinePassed(expected, storeTrouble, now()));
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

	private void observe(@Nullable Lease lease) {
		LeaderInfo leader = (lease != null && lease.hasLiveHolder()) ? toLeaderInfo(lease) : null;
		synchronized (this) {
			if (!(this.state instanceof Leading) || leader != null) {
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

	/** Counts a failed call. @return when to try again */
	private Next failed(Throwable ex) {
		this.health.failed(ex);
		synchronized (this) {
			return on(new Event.Failed(this.health.consecutiveFailures())).next();
		}
	}

	private void recovered() {
		this.health.answered(now());
	}

	/** A snapshot for health checks and endpoints; no I/O. */
	synchronized ElectionStatus status() {
		long now = now();
		Optional<Duration> beliefRemaining = (this.state instanceof Leading leading && leading.belief().isHeldAt(now))
				? Optional.of(Duration.ofNanos(leading.belief().deadline() - now)) : Optional.empty();
		return new ElectionStatus(this.group, this.candidateId, beliefRemaining.isPresent(),
				Optional.ofNullable(this.observed), beliefRemaining, this.health.sinceAnswered(now),
				this.health.consecutiveFailures(), this.store.backend(),
				Optional.ofNullable(this.duplicateId.conflict()), phase(now));
	}

	/**
	 * Where this group's election stands at the given instant: the state's phase, with
	 * the following policies' say for a follower. Guarded by this.
	 */
	private GroupPhase phase(long now) {
		GroupPhase phase = this.state.phase(now);
		if (phase != GroupPhase.FOLLOWING) {
			return phase;
		}
		if (this.duplicateId.conflict() != null) {
			return GroupPhase.STANDING_ASIDE;
		}
		return (this.stayOut.remaining(now) > 0) ? GroupPhase.STAYING_OUT : GroupPhase.FOLLOWING;
	}

	/** Time since this elector started competing, or null before it started. */
	synchronized @Nullable Duration sinceStarted() {
		return (this.startedNanos != -1) ? Duration.ofNanos(now() - this.startedNanos) : null;
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
