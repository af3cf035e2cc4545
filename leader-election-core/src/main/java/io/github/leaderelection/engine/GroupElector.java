package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Future;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderInfo;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.RunRecords;
import io.github.leaderelection.engine.GroupMachine.Effect;
import io.github.leaderelection.engine.GroupMachine.Event;
import io.github.leaderelection.engine.GroupMachine.Step;
import io.github.leaderelection.engine.GroupState.Belief;
import io.github.leaderelection.engine.GroupState.Leading;
import io.github.leaderelection.engine.GroupState.NotStarted;
import io.github.leaderelection.engine.GroupState.Pending;
import io.github.leaderelection.engine.GroupState.Releasing;
import io.github.leaderelection.engine.GroupState.Stopped;
import io.github.leaderelection.spi.AdminLeaseStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.spi.RunRecordStore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The election of one group on this instance: the group's public face, and the one place
 * where its state changes. What happens (store answers, timers, commands) goes to the
 * group's {@link GroupMachine state machine} through {@link #on}, which carries out what
 * it decides that does not call the store: the belief's deadline check, the log, the
 * listeners' events. Its parts take the steps: {@link GroupSteps} decides who takes the
 * next one and when (the node's rounds, or an attempt of the group's own),
 * {@link GroupCalls} makes the group's own store calls and turns every answer into an
 * event, {@link GroupMembership} keeps the candidate's place in the store.
 *
 * <p>
 * The state is one volatile {@link GroupState} value, read without a lock by
 * {@link #isLeader()}. Everything else of the group, in this class and its parts, is
 * guarded by this elector's lock, which is never held across a store call, so a hung
 * store cannot block readers, the deadline timer or an administrator.
 */
final class GroupElector implements LeaderElection {

	private static final Logger logger = LoggerFactory.getLogger(GroupElector.class);

	private final String group;

	private final ElectionRuntime runtime;

	private final LeaseStore store;

	private final String candidateId;

	private final Duration callTimeout;

	private final GroupMachine machine;

	private final GroupMembership membership;

	private final GroupSteps steps;

	private final GroupCalls calls;

	/** Replaced only by {@link #on}. */
	private volatile GroupState state = GroupState.NOT_STARTED;

	/** After a yield, or a lease given up, another candidate gets the first try. */
	private final StayOut stayOut = new StayOut();

	private final StoreHealth health;

	private final LeaderSightings sightings;

	private final CallerCalls callerCalls;

	private final @Nullable RunRecords runRecords;

	private long startedNanos = -1;

	private @Nullable Future<?> deadlineCheck;

	/**
	 * @param rounds the node's rounds, which read and take the leases of many groups at
	 * once
	 * @param balancing the balancer, or null unless balancing
	 */
	GroupElector(String group, ElectionRuntime runtime, GroupSteps.Rounds rounds,
			GroupCalls.@Nullable Balancing balancing) {
		this.group = group;
		this.runtime = runtime;
		this.store = runtime.store();
		this.candidateId = runtime.candidateId();
		this.callTimeout = runtime.timing().storeCallTimeout();
		this.machine = new GroupMachine(group, this.candidateId, runtime.timing().renewDeadline().toNanos(),
				runtime.timing().retryPeriod().toNanos(), this::isLeadingInTerm);
		this.membership = new GroupMembership(group, this.candidateId, this.store, this.callTimeout,
				runtime.timing().retryPeriod());
		this.sightings = new LeaderSightings(group, this.candidateId, runtime.notifier(),
				runtime.timing().retryPeriod().toNanos());
		this.health = new StoreHealth(group, runtime.storeOutages());
		this.calls = new GroupCalls(this, runtime, this.stayOut, this.sightings, this.health, this.membership,
				balancing);
		this.steps = new GroupSteps(this, runtime, rounds, this.calls);
		this.callerCalls = new CallerCalls(group, this.store);
		this.runRecords = (this.store instanceof RunRecordStore runs) ? new GroupRunRecords(group, this.candidateId,
				runs, this::leaseWhileLeading, this.callTimeout, this.callerCalls) : null;
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
		return leadingNow() != null;
	}

	@Override
	public Optional<Leadership> leadership() {
		Leading leading = leadingNow();
		return (leading != null) ? Optional.of(leading.belief().leadership()) : Optional.empty();
	}

	/** The lease this instance leads under at this instant, for a fenced write. */
	private Optional<Lease> leaseWhileLeading() {
		return Optional.ofNullable(leadingNow()).map(Leading::lease);
	}

	private boolean isLeadingInTerm(long term) {
		Leading leading = leadingNow();
		return leading != null && leading.belief().leadership().term() == term;
	}

	/** The state if this instance's belief holds at this instant, else null; no lock. */
	private @Nullable Leading leadingNow() {
		return (this.state instanceof Leading leading && leading.belief().isHeldAt(now())) ? leading : null;
	}

	@Override
	public synchronized Optional<LeaderInfo> currentLeader() {
		return Optional.ofNullable(this.sightings.leader());
	}

	@Override
	public Optional<LeaderInfo> readLeader() {
		Optional<Lease> lease = this.callerCalls.call("read the leader",
				() -> this.store.read(this.group, this.callTimeout));
		observe(lease.orElse(null));
		return lease.filter(Lease::hasLiveHolder).map(this::toLeaderInfo);
	}

	@Override
	public Optional<RunRecords> runRecords() {
		return Optional.ofNullable(this.runRecords);
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
		this.steps.requestAttempt();
		return wasLeading;
	}

	@Override
	public void forceLeader(String targetCandidateId) {
		Names.requireValid("candidate id", targetCandidateId);
		this.callerCalls.call("force candidate '" + targetCandidateId + "' to lead", () -> {
			admin("force a leader").forceLeader(this.group, targetCandidateId, this.callTimeout);
			return null;
		});
		if (!targetCandidateId.equals(this.candidateId)) {
			synchronized (this) {
				on(new Event.ForcedElsewhere());
			}
		}
		this.steps.requestAttempt();
	}

	@Override
	public void forceReelection() {
		this.callerCalls.call("force a re-election", () -> {
			admin("clear the lease").clear(this.group, this.callTimeout);
			return null;
		});
		synchronized (this) {
			on(new Event.ForcedElsewhere());
		}
		this.steps.requestAttempt();
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
			this.steps.started();
		}
		this.runtime.executeJoin(() -> this.membership.joinAndWatch(this.steps::requestAttempt, this::holdsLease));
		logger.debug("Joined the election of group '{}' as candidate '{}'", this.group, this.candidateId);
		this.steps.requestAttempt();
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
			this.steps.stopped();
		}
		this.membership.stopWatching();
	}

	/**
	 * Leaves the group in the store once stopped: releases the lease, if it still holds
	 * one and {@code release} is on, so that a follower takes over at its next attempt
	 * instead of after the lease runs out, then gives up its place in the store's queue.
	 */
	void leaveAfterStop(boolean release) {
		Step step;
		synchronized (this) {
			step = on(new Event.Leave());
		}
		for (Effect effect : step.effects()) {
			if (release && effect instanceof Effect.Release held) {
				this.membership.release(held.lease());
			}
		}
		this.membership.leave();
	}

	private boolean holdsLease() {
		GroupState current = this.state;
		return current instanceof Leading || current instanceof Pending || current instanceof Releasing;
	}

	/** The state now; replaced only by {@link #on}. */
	GroupState state() {
		return this.state;
	}

	/** The parts that take the group's steps, which the node's rounds talk to. */
	GroupSteps steps() {
		return this.steps;
	}

	/**
	 * Looks at the lease again now if this follower last saw it released, as balancing
	 * may hold it back: the balancer has just listed the live candidates again, and the
	 * candidate it held the group back for may be gone.
	 */
	void lookAgainIfSeenFree() {
		if (this.calls.seenFree()) {
			this.steps.requestAttempt();
		}
	}

	/** Whether this elector has started and not stopped. */
	boolean isCompeting() {
		GroupState current = this.state;
		return !(current instanceof NotStarted || current instanceof Stopped);
	}

	/** When this instance was granted the leadership it holds, or 0 if it holds none. */
	long grantedNanos() {
		return (this.state instanceof Leading leading) ? leading.belief().grantedNanos() : 0;
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

	// Transitions

	/**
	 * The one place where the state changes: feeds an event to the machine and carries
	 * out, with the lock held and in order, what does not call the store (the belief's
	 * deadline check, the log, the listeners' events, the observed leader, a stay-out).
	 * Store calls it asks for are the caller's, once the lock is released.
	 */
	Step on(Event event) {
		GroupState from = this.state;
		Step step = this.machine.next(from, event);
		this.state = step.state();
		for (Effect effect : step.effects()) {
			if (effect instanceof Effect.Granted granted) {
				this.sightings.granted(granted.leadership());
			}
			else if (effect instanceof Effect.Revoked revoked) {
				this.sightings.revoked(revoked.leadership(), revoked.reason());
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
			GroupSteps.cancel(this.deadlineCheck);
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

	private void scheduleDeadlineCheck(Belief belief) {
		GroupSteps.cancel(this.deadlineCheck);
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
			boolean storeTrouble = this.health.consecutiveFailures() > 0 || this.steps.callPending();
			on(new Event.DeadlinePassed(expected, storeTrouble, now()));
		}
		this.steps.requestAttempt();
	}

	/** Takes in the lease as read: the leader seen, and a term that ends a stay-out. */
	void observe(@Nullable Lease lease) {
		LeaderInfo leader = (lease != null && lease.hasLiveHolder()) ? toLeaderInfo(lease) : null;
		synchronized (this) {
			if (!(this.state instanceof Leading) || leader != null) {
				this.sightings.saw(leader);
			}
			if (lease != null) {
				this.stayOut.sawTerm(lease.term());
			}
		}
	}

	private LeaderInfo toLeaderInfo(Lease lease) {
		return new LeaderInfo(this.group, lease.holder(), lease.term());
	}

	/** A snapshot for health checks and endpoints; no I/O. */
	synchronized ElectionStatus status() {
		long now = now();
		Optional<Duration> beliefRemaining = (this.state instanceof Leading leading && leading.belief().isHeldAt(now))
				? Optional.of(Duration.ofNanos(leading.belief().deadline() - now)) : Optional.empty();
		return new ElectionStatus(this.group, this.candidateId, beliefRemaining.isPresent(),
				Optional.ofNullable(this.sightings.leader()), beliefRemaining, this.health.sinceAnswered(now),
				this.health.consecutiveFailures(), this.store.backend(), Optional.ofNullable(this.sightings.conflict()),
				phase(now));
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
		if (this.sightings.conflict() != null) {
			return GroupPhase.STANDING_ASIDE;
		}
		return (this.stayOut.remaining(now) > 0) ? GroupPhase.STAYING_OUT : GroupPhase.FOLLOWING;
	}

	/** Time since this elector started competing, or null before it started. */
	synchronized @Nullable Duration sinceStarted() {
		return (this.startedNanos != -1) ? Duration.ofNanos(now() - this.startedNanos) : null;
	}

	private AdminLeaseStore admin(String what) {
		if (this.store instanceof AdminLeaseStore admin) {
			return admin;
		}
		throw new UnsupportedOperationException("The " + this.store.backend() + " store cannot " + what);
	}

	private long now() {
		return this.runtime.nanoTime();
	}

	@Override
	public String toString() {
		return "LeaderElection[group=" + this.group + ", candidateId=" + this.candidateId + ", leader=" + isLeader()
				+ "]";
	}

}
