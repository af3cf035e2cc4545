package io.github.leaderelection.engine;

import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.leaderelection.engine.GroupMachine.Effect;
import io.github.leaderelection.engine.GroupMachine.Event;
import io.github.leaderelection.engine.GroupMachine.Next;
import io.github.leaderelection.engine.GroupState.Belief;
import io.github.leaderelection.engine.GroupState.Following;
import io.github.leaderelection.engine.GroupState.Leading;
import io.github.leaderelection.engine.GroupState.Lost;
import io.github.leaderelection.engine.GroupState.Pending;
import io.github.leaderelection.engine.GroupState.Releasing;
import io.github.leaderelection.engine.GroupState.Stopped;
import io.github.leaderelection.spi.BatchLeaseStore;
import io.github.leaderelection.spi.Lease;
import org.jspecify.annotations.Nullable;

/**
 * Who takes the next step of one group's election, and when: the node's {@link NodeRounds
 * rounds} (a leader's renewal, a follower's look, taken for all groups at once), or an
 * attempt of the group's own (taking a lease it saw free, releasing, retrying after a
 * failure, waiting out an earlier holder). Own attempts run on the engine's shared store
 * threads, at most one at a time per group, claimed by {@code attemptRunning}; a round
 * that takes a lease claims the group the same way. A request arriving while an attempt
 * runs is folded into a single follow-up attempt.
 *
 * <p>
 * What an answer means is the {@link GroupMachine}'s to decide: the answers go to
 * {@link GroupElector#on}. The fields are guarded by the elector's lock (one lock per
 * group), and no store call is made with it held.
 */
final class GroupSteps {

	private final GroupElector elector;

	private final ElectionRuntime runtime;

	private final Rounds rounds;

	private final GroupCalls calls;

	private final long retryPeriodNanos;

	private @Nullable Future<?> nextAttempt;

	/** Whether the next regular step belongs to the node's round. */
	private boolean inRounds;

	/** Whether a round's store call for this group is on its way. */
	private boolean roundCallPending;

	private final AtomicBoolean attemptRunning = new AtomicBoolean();

	private volatile boolean attemptRequested;

	GroupSteps(GroupElector elector, ElectionRuntime runtime, Rounds rounds, GroupCalls calls) {
		this.elector = elector;
		this.runtime = runtime;
		this.rounds = rounds;
		this.calls = calls;
		this.retryPeriodNanos = runtime.timing().retryPeriod().toNanos();
	}

	/**
	 * The first look at the lease is a round's, taken at once: a node starting with many
	 * groups reads and takes them in a few requests, not one each. Guarded by the
	 * elector's lock.
	 */
	void started() {
		this.inRounds = true;
	}

	/** Cancels the next attempt of the group's own. Guarded by the elector's lock. */
	void stopped() {
		cancel(this.nextAttempt);
	}

	/**
	 * Whether a store call for the group is on its way. Guarded by the elector's lock.
	 */
	boolean callPending() {
		return this.attemptRunning.get() || this.roundCallPending;
	}

	/**
	 * Asks for a look at the lease now (a notification, a start, an administrator's
	 * change). A follower whose next step is the node's round asks the rounds for a look
	 * soon, which reads and takes the leases of all the groups asking at once; otherwise
	 * the group attempts on its own.
	 */
	void requestAttempt() {
		this.attemptRequested = true;
		if (looksInRounds()) {
			this.rounds.lookSoon(this.elector);
			return;
		}
		if (this.attemptRunning.compareAndSet(false, true)) {
			GroupState current = this.elector.state();
			boolean renews = current instanceof Leading || current instanceof Pending;
			if (!(renews ? this.runtime.executeRenewal(this::runAttempts)
					: this.runtime.executeStoreTask(this::runAttempts))) {
				this.attemptRunning.set(false);
			}
		}
	}

	private void runAttempts() {
		try {
			while (this.attemptRequested && this.elector.isCompeting()) {
				this.attemptRequested = false;
				Next next = Next.after(this.retryPeriodNanos);
				try {
					next = this.calls.attemptSafely();
				}
				finally {
					// Even an Error thrown through the attempt leaves the next one
					// scheduled.
					schedule(next);
				}
			}
		}
		finally {
			this.attemptRunning.set(false);
		}
		if (this.attemptRequested && this.elector.isCompeting()) {
			requestAttempt();
		}
	}

	/**
	 * Schedules the group's next attempt, or leaves its next step to the node's round. A
	 * lease to release, or one still waited out, is the group's own business.
	 */
	void schedule(Next next) {
		synchronized (this.elector) {
			GroupState current = this.elector.state();
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
				delay = Math.max(0,
						Math.min(this.retryPeriodNanos, pending.activeFromNanos() - this.runtime.nanoTime()));
			}
			this.inRounds = round;
			if (!round) {
				this.nextAttempt = this.runtime.schedule(this::requestAttempt, delay);
			}
		}
	}

	/** Whether the group follows, with its next look left to the node's rounds. */
	boolean looksInRounds() {
		synchronized (this.elector) {
			GroupState current = this.elector.state();
			return this.inRounds && (current instanceof Following || current instanceof Lost);
		}
	}

	// The node's rounds (see NodeRounds)

	/**
	 * The group's part in a renewal round sent at the given instant: the lease it
	 * believes in, unless its next step is its own or the belief is over (a belief past
	 * its deadline is ended by the deadline check, not renewed).
	 */
	@Nullable RoundRenewal renewalForRound(long start) {
		synchronized (this.elector) {
			if (!this.inRounds || this.attemptRunning.get() || !(this.elector.state() instanceof Leading leading)
					|| !leading.belief().isHeldAt(start)) {
				return null;
			}
			this.roundCallPending = true;
			return new RoundRenewal(leading.lease(), leading.belief(), start);
		}
	}

	/**
	 * Whether a read round looks at this group: it follows the group, with no step of its
	 * own scheduled.
	 */
	boolean followsInRound() {
		synchronized (this.elector) {
			boolean follows = looksInRounds() && !this.attemptRunning.get();
			if (follows) {
				this.roundCallPending = true;
				// This read answers any look asked for so far. (A group left out because
				// its attempt is running keeps the request: the attempt asks again when
				// it ends.)
				this.attemptRequested = false;
			}
			return follows;
		}
	}

	/**
	 * What a read round found: the group's lease, or null if it was never led.
	 * @return whether this candidate is to take the lease now, in the round's
	 * {@link BatchLeaseStore#tryAcquireAll acquisition}
	 */
	boolean readInRound(@Nullable Lease lease) {
		synchronized (this.elector) {
			this.roundCallPending = false;
		}
		this.calls.answered();
		Next later = this.calls.whenToTake(lease, this::looksInRounds);
		if (later == null) {
			return true;
		}
		if (!later.round() && looksInRounds()) {
			schedule(later); // tried again the moment the stay-out or hold-back ends
		}
		return false;
	}

	/**
	 * Lets a round take the group's lease in its acquisition: claims the group as an
	 * attempt would, so that no attempt of its own runs meanwhile, unless one already
	 * does or the lease is no longer this group's to take.
	 * @return whether the round may take the lease; if so, {@link #acquiredInRound} or
	 * {@link #acquireFailedInRound} follows
	 */
	boolean claimForRoundAcquire() {
		synchronized (this.elector) {
			return looksInRounds() && this.attemptRunning.compareAndSet(false, true);
		}
	}

	/**
	 * What the round's acquisition did for the group.
	 * @param taken the lease taken, or null if another candidate holds it
	 * @param start when the acquisition was sent
	 * @param end when it was answered
	 */
	void acquiredInRound(@Nullable Lease taken, long start, long end) {
		Next next = Next.after(this.retryPeriodNanos);
		try {
			this.calls.answered();
			next = this.calls.afterAcquire(taken, start, end);
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
			next = this.calls.failed(ex);
		}
		finally {
			endRoundClaim(next);
		}
	}

	private void endRoundClaim(Next next) {
		try {
			schedule(next);
		}
		finally {
			this.attemptRunning.set(false);
		}
		if (this.attemptRequested && this.elector.isCompeting()) {
			requestAttempt();
		}
	}

	/** A round's store call for the group failed. */
	void roundFailed(Throwable ex) {
		synchronized (this.elector) {
			this.roundCallPending = false;
		}
		schedule(this.calls.failed(ex));
	}

	/** The group's lease in a renewal round, and what the round's outcome does to it. */
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

		GroupSteps steps() {
			return GroupSteps.this;
		}

		/**
		 * The store extended the lease.
		 * @param renewed the lease as renewed
		 */
		void renewed(Lease renewed) {
			synchronized (GroupSteps.this.elector) {
				GroupSteps.this.roundCallPending = false;
			}
			GroupSteps.this.calls.answered();
			schedule(GroupSteps.this.calls.renewed(this.lease, renewed, this.before, this.start));
		}

		/**
		 * The store refused: stops believing at once. {@link #lostAs} follows, with the
		 * lease as read after the round.
		 * @return whether the group is to be read to learn why
		 */
		boolean refused() {
			GroupSteps.this.calls.answered();
			synchronized (GroupSteps.this.elector) {
				GroupSteps.this.roundCallPending = false;
				this.readWhy = GroupSteps.this.elector.on(new Event.Refused(this.lease)).has(Effect.ReadWhy.class);
			}
			return this.readWhy;
		}

		/** Revokes the belief that {@link #refused()} ended, with the store's reason. */
		void lostAs(@Nullable Lease now) {
			if (this.readWhy) {
				schedule(GroupSteps.this.calls.lostAs(now));
			}
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

	/** Cancels a scheduled task, if any, without interrupting it. */
	static void cancel(@Nullable Future<?> future) {
		if (future != null) {
			future.cancel(false);
		}
	}

}
