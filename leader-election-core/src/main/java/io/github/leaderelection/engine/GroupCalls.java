package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.Optional;
import java.util.function.BooleanSupplier;

import io.github.leaderelection.engine.GroupMachine.Effect;
import io.github.leaderelection.engine.GroupMachine.Event;
import io.github.leaderelection.engine.GroupMachine.Next;
import io.github.leaderelection.engine.GroupMachine.Step;
import io.github.leaderelection.engine.GroupState.Belief;
import io.github.leaderelection.engine.GroupState.Following;
import io.github.leaderelection.engine.GroupState.Leading;
import io.github.leaderelection.engine.GroupState.Lost;
import io.github.leaderelection.engine.GroupState.Pending;
import io.github.leaderelection.engine.GroupState.Releasing;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store calls of one group's own attempts, and what every answer about the group's
 * lease, its own or a round's, is turned into: an event for the {@link GroupMachine}
 * (through {@link GroupElector#on}) and when to take the next step. Also the policy of a
 * follower that sees the lease: whether to take it now. Guarded by the elector's lock
 * (one lock per group), which is never held across a store call.
 */
final class GroupCalls {

	private static final Logger logger = LoggerFactory.getLogger(GroupElector.class);

	private final GroupElector elector;

	private final ElectionRuntime runtime;

	private final LeaseStore store;

	private final String group;

	private final String candidateId;

	private final Duration callTimeout;

	private final long retryPeriodNanos;

	private final StayOut stayOut;

	private final LeaderSightings sightings;

	private final StoreHealth health;

	private final GroupMembership membership;

	/** Null unless balancing. */
	private final @Nullable Balancing balancing;

	/**
	 * When this elector first saw the lease released, once past any stay-out, while
	 * balancing (its hold-back counts from then); 0 until it sees it, and again once it
	 * sees it led.
	 */
	private long freeSinceNanos;

	/** When this elector first read the group's lease; 0 before. */
	private long followingSinceNanos;

	GroupCalls(GroupElector elector, ElectionRuntime runtime, StayOut stayOut, LeaderSightings sightings,
			StoreHealth health, GroupMembership membership, @Nullable Balancing balancing) {
		this.elector = elector;
		this.runtime = runtime;
		this.store = runtime.store();
		this.group = elector.group();
		this.candidateId = runtime.candidateId();
		this.callTimeout = runtime.timing().storeCallTimeout();
		this.retryPeriodNanos = runtime.timing().retryPeriod().toNanos();
		this.stayOut = stayOut;
		this.sightings = sightings;
		this.health = health;
		this.membership = membership;
		this.balancing = balancing;
	}

	/**
	 * Runs one attempt; no exception ever leaves it, so nothing a store does can stop the
	 * election.
	 */
	Next attemptSafely() {
		try {
			Next next = attempt();
			answered();
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
		GroupState current = this.elector.state();
		if (current instanceof Releasing releasing) {
			this.store.release(releasing.lease(), this.callTimeout);
			Step step;
			synchronized (this.elector) {
				step = this.elector.on(new Event.Released(releasing.lease()));
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
			synchronized (this.elector) {
				this.elector.on(new Event.DeadlinePassed(before, this.health.consecutiveFailures() > 0, start));
			}
			return Next.NOW;
		}
		Lease renewed = this.store.renew(lease, this.runtime.timing().leaseDuration(), this.callTimeout).orElse(null);
		if (renewed == null) {
			return refused(lease);
		}
		return renewed(lease, renewed, before, start);
	}

	/** The renewal of {@code lease}, sent at {@code start}, succeeded. */
	Next renewed(Lease lease, Lease renewed, @Nullable Belief before, long start) {
		synchronized (this.elector) {
			return this.elector.on(new Event.Renewed(lease, renewed, before, start, now())).next();
		}
	}

	private Next refused(Lease lease) {
		synchronized (this.elector) {
			if (!this.elector.on(new Event.Refused(lease)).has(Effect.ReadWhy.class)) {
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
	Next lostAs(@Nullable Lease now) {
		noteOwnIdElsewhere(now, true);
		Next next;
		synchronized (this.elector) {
			next = this.elector.on(new Event.LostAs(now)).next();
		}
		this.elector.observe(now);
		return next;
	}

	private Next acquire() {
		Lease current = this.store.read(this.group, this.callTimeout).orElse(null);
		Next later = whenToTake(current, () -> {
			GroupState state = this.elector.state();
			return state instanceof Following || state instanceof Lost;
		});
		if (later != null) {
			return later;
		}
		long start = now();
		Optional<Lease> taken = this.store.tryAcquire(this.group, this.candidateId,
				this.runtime.timing().leaseDuration(), this.callTimeout);
		return afterAcquire(taken.orElse(null), start, now());
	}

	/**
	 * Whether to take a lease this follower sees now: not one another candidate holds,
	 * not while it stays out after giving a lease up, stands aside for another process
	 * with its id or watches whether one holds the lease seen, and not while balancing
	 * holds a released lease back for another candidate.
	 * @param seen the lease as read, or null if the group was never led
	 * @param following whether the group is still this follower's to take, checked with
	 * the elector's lock held
	 * @return null to take it now, or when to look again
	 */
	@Nullable Next whenToTake(@Nullable Lease seen, BooleanSupplier following) {
		synchronized (this.elector) {
			if (this.followingSinceNanos == 0) {
				this.followingSinceNanos = now();
			}
		}
		this.elector.observe(seen);
		noteOwnIdElsewhere(seen, false);
		synchronized (this.elector) {
			if (seen != null && !seen.isAcquirableBy(this.candidateId)) {
				// Led: the next time it is free, balancing's hold-back starts afresh.
				this.freeSinceNanos = 0;
				return Next.ROUND;
			}
			if (!following.getAsBoolean() || this.sightings.conflict() != null
					|| this.sightings.holdsOff(seen, now())) {
				return Next.ROUND;
			}
			long look = this.stayOut.nextLook(now(), this.retryPeriodNanos);
			if (look != 0) {
				// At the end of a stay-out about to end, otherwise in a round, where a
				// greater term may have ended it meanwhile
				return (look == StayOut.NOT_NOW) ? Next.ROUND : Next.after(look);
			}
		}
		long heldBack = heldBackForBalance(seen);
		return (heldBack > 0) ? Next.after(heldBack) : null;
	}

	/**
	 * Turns a lease taken into belief, at once or once the previous holder's lease is
	 * surely over.
	 * @param taken the lease taken, or null if another candidate holds it
	 * @param start when the acquisition was sent
	 * @param end when it was answered
	 */
	Next afterAcquire(@Nullable Lease taken, long start, long end) {
		if (taken == null) {
			return Next.ROUND;
		}
		if (this.balancing != null) {
			this.balancing.acquired();
		}
		Step step;
		synchronized (this.elector) {
			this.freeSinceNanos = 0;
			this.sightings.acquired(taken.term());
			step = this.elector.on(new Event.Acquired(afterWatching(taken, start, end), start, end, now()));
		}
		if (step.has(Effect.Release.class)) {
			this.membership.release(taken); // taken as the elector stopped
		}
		return step.next();
	}

	/**
	 * The lease as this elector acts on it: when instances watch before leading, not
	 * before it has followed the group for a lease duration. An instance knows only the
	 * terms it has seen: one that starts after the store lost the group's record
	 * (deleted, wiped, restored from an older copy) cannot tell the record it finds from
	 * the truth, and would lead while the holder of the lost term still believes, until
	 * that holder's next renewal. After a lease duration that holder has stopped, or
	 * renewed where this elector saw it. The first election after the whole cluster
	 * starts takes a lease duration longer, and balancing gives a starting instance no
	 * share until then.
	 */
	private Lease afterWatching(Lease taken, long start, long end) {
		if (!this.runtime.watchBeforeLeading()) {
			return taken;
		}
		if (this.followingSinceNanos == 0) {
			this.followingSinceNanos = start;
		}
		long watchedUntil = this.followingSinceNanos + this.runtime.timing().leaseDuration().toNanos();
		Duration left = Duration.ofNanos(watchedUntil - end);
		return (left.compareTo(taken.activeIn()) > 0) ? taken.withActiveIn(left) : taken;
	}

	/**
	 * How long to leave a lease that is free to take to another candidate, as balancing
	 * asks (see {@link Balancer#holdsBack}): only a lease that was released (a
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
		synchronized (this.elector) {
			if (this.freeSinceNanos == 0) {
				this.freeSinceNanos = now();
			}
			freeSince = this.freeSinceNanos;
		}
		if (!balancer.holdsBack(this.elector, freeSince)) {
			return 0;
		}
		return Math.max(0, freeSince + this.retryPeriodNanos - now());
	}

	/** Whether this follower last saw the lease released. */
	boolean seenFree() {
		synchronized (this.elector) {
			GroupState current = this.elector.state();
			return this.freeSinceNanos != 0 && (current instanceof Following || current instanceof Lost);
		}
	}

	/**
	 * See {@link DuplicateIdDetector}: logs outside the lock what it found.
	 * @param displaced whether the lease was read because a renewal was refused
	 */
	private void noteOwnIdElsewhere(@Nullable Lease lease, boolean displaced) {
		DuplicateIdDetector.Finding finding;
		synchronized (this.elector) {
			finding = this.sightings.ownIdSeen(lease, now(), displaced);
		}
		this.sightings.report(finding, lease);
	}

	/** Counts a failed call. @return when to try again */
	Next failed(Throwable ex) {
		this.health.failed(ex);
		synchronized (this.elector) {
			return this.elector.on(new Event.Failed(this.health.consecutiveFailures())).next();
		}
	}

	/** The store answered. */
	void answered() {
		this.health.answered(now());
	}

	private long now() {
		return this.runtime.nanoTime();
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
