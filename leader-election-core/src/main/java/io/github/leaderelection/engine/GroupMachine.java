package io.github.leaderelection.engine;

import java.util.List;
import java.util.function.LongPredicate;

import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.engine.GroupState.Belief;
import io.github.leaderelection.engine.GroupState.Leading;
import io.github.leaderelection.engine.GroupState.Lost;
import io.github.leaderelection.engine.GroupState.NotStarted;
import io.github.leaderelection.engine.GroupState.Pending;
import io.github.leaderelection.engine.GroupState.Releasing;
import io.github.leaderelection.engine.GroupState.Stopped;
import io.github.leaderelection.spi.Lease;
import org.jspecify.annotations.Nullable;

/**
 * The state machine of one group's election on this instance: {@link #next} takes the
 * state and an event (what a store call answered, a timer, a command) and returns the
 * next state, the effects to carry out and when to take the next step. It is the one
 * place where leadership changes: every grant, extension and revocation is decided here.
 * It makes no store call, starts no thread and reads no clock: the events carry the
 * instants, and the {@link GroupElector} carries out the effects.
 */
final class GroupMachine {

	private final String group;

	private final String candidateId;

	private final long renewDeadlineNanos;

	private final long retryPeriodNanos;

	/**
	 * Backs {@link Leadership#isValid()}: whether this instance still leads in a term.
	 */
	private final LongPredicate leadingInTerm;

	GroupMachine(String group, String candidateId, long renewDeadlineNanos, long retryPeriodNanos,
			LongPredicate leadingInTerm) {
		this.group = group;
		this.candidateId = candidateId;
		this.renewDeadlineNanos = renewDeadlineNanos;
		this.retryPeriodNanos = retryPeriodNanos;
		this.leadingInTerm = leadingInTerm;
	}

	/** The transition function. */
	Step next(GroupState state, Event event) {
		if (event instanceof Event.Start) {
			return (state instanceof NotStarted) ? Step.to(GroupState.FOLLOWING, Next.ROUND) : Step.stay(state);
		}
		if (event instanceof Event.Acquired acquired) {
			return acquired(state, acquired);
		}
		if (event instanceof Event.Renewed renewed) {
			return renewed(state, renewed);
		}
		if (event instanceof Event.Refused refused) {
			return refused(state, refused.lease());
		}
		if (event instanceof Event.LostAs lostAs) {
			return lostAs(state, lostAs.now());
		}
		if (event instanceof Event.DeadlinePassed passed) {
			return deadlinePassed(state, passed);
		}
		if (event instanceof Event.GiveUp giveUp) {
			return giveUp(state, giveUp.reason());
		}
		if (event instanceof Event.ForcedElsewhere) {
			return forcedElsewhere(state);
		}
		if (event instanceof Event.Stop) {
			return stop(state);
		}
		if (event instanceof Event.Leave) {
			return (state instanceof Stopped stopped && stopped.lease() != null)
					? Step.to(new Stopped(null), Next.ROUND, new Effect.Release(stopped.lease())) : Step.stay(state);
		}
		if (event instanceof Event.Released released) {
			return released(state, released.lease());
		}
		if (event instanceof Event.Failed failed) {
			return Step.stay(state, retryAfterFailure(state, failed.consecutiveFailures()));
		}
		throw new IllegalArgumentException("Unknown event " + event);
	}

	/**
	 * A lease taken: believed at once, or once the previous holder's lease is surely
	 * over, measured from the end of the request.
	 */
	private Step acquired(GroupState state, Event.Acquired acquired) {
		Lease lease = acquired.lease();
		if (state instanceof Stopped || state instanceof NotStarted) {
			return Step.stay(state, Next.ROUND, new Effect.Release(lease));
		}
		// A belief still on (which no acquisition should meet) ends before the new one.
		Effect ended = endedBelief(state, RevocationReason.LEASE_LOST);
		long untilActive = lease.activeIn().toNanos();
		if (untilActive > 0) {
			return new Step(new Pending(lease, acquired.end() + untilActive),
					Next.after(Math.min(this.retryPeriodNanos, untilActive)), effects(ended));
		}
		return grantUnlessTooLate(lease, acquired.start(), acquired.at(), ended);
	}

	/**
	 * Grants on a call that started at the given instant, unless the call took the whole
	 * renew deadline: the belief would be over before it begins, and the listeners would
	 * hear of a leadership that never was. The lease is given up instead, as by a leader
	 * whose store stopped answering in time, so that a candidate with a faster link gets
	 * the first try.
	 */
	private Step grantUnlessTooLate(Lease lease, long start, long at, @Nullable Effect before) {
		if (at - start < this.renewDeadlineNanos) {
			Leadership leadership = new Leadership(this.group, this.candidateId, lease.term(), this.leadingInTerm);
			Belief belief = new Belief(leadership, start + this.renewDeadlineNanos, at);
			return new Step(new Leading(lease, belief), Next.ROUND, effects(before, new Effect.Granted(leadership)));
		}
		return new Step(new Releasing(lease, false), Next.NOW,
				effects(before, new Effect.AnsweredTooLate(lease, at - start),
						new Effect.StayOut(this.retryPeriodNanos, lease.term())));
	}

	/**
	 * A renewal that succeeded: extends the belief it renewed, or grants a lease that was
	 * waited out. A belief whose deadline passed during the call is over, whatever the
	 * store answered: a term that ended never comes back.
	 */
	private Step renewed(GroupState state, Event.Renewed renewed) {
		Lease lease = renewed.lease();
		if (state instanceof Releasing releasing && releasing.lease() == lease) {
			// Yielded while the renewal was on its way: a lease to be released is never
			// granted or extended, or the release would leave a belief with no lease. The
			// release names the lease as renewed, which is what the store now holds.
			return Step.stay(new Releasing(renewed.renewed(), releasing.requeue()), Next.NOW);
		}
		if (state instanceof Leading leading && leading.lease() == lease) {
			Belief current = leading.belief();
			Leading held = new Leading(renewed.renewed(), current);
			if (current != renewed.before()) {
				return Step.stay(held, Next.NOW);
			}
			if (!current.isHeldAt(renewed.at())) {
				// The deadline passed during the call and its check has not run yet: the
				// belief ended then, and isLeader() has said so since.
				return expire(held, true, Next.NOW);
			}
			return Step.to(
					new Leading(renewed.renewed(), current.extendedTo(renewed.start() + this.renewDeadlineNanos)),
					Next.ROUND);
		}
		if (state instanceof Pending pending && pending.lease() == lease) {
			if (renewed.before() != null) {
				return Step.stay(state, Next.NOW);
			}
			long untilActive = pending.activeFromNanos() - renewed.start();
			if (untilActive > 0) {
				return Step.stay(new Pending(renewed.renewed(), pending.activeFromNanos()),
						Next.after(Math.min(this.retryPeriodNanos, untilActive)));
			}
			return grantUnlessTooLate(renewed.renewed(), renewed.start(), renewed.at(), null);
		}
		return Step.stay(state); // forced elsewhere or stopped while renewing
	}

	/**
	 * The store refused to renew: the belief ends at once, before the store is asked why
	 * ({@link Effect.ReadWhy}, then {@link Event.LostAs}).
	 */
	private Step refused(GroupState state, Lease lease) {
		if (state instanceof Leading leading && leading.lease() == lease) {
			return new Step(new Lost(leading.belief()), Next.ROUND, effects(new Effect.ReadWhy()));
		}
		if (state instanceof Pending pending && pending.lease() == lease) {
			return new Step(GroupState.FOLLOWING, Next.ROUND, effects(new Effect.ReadWhy()));
		}
		if (state instanceof Releasing releasing && releasing.lease() == lease) {
			return new Step(state, Next.ROUND, effects(new Effect.ReadWhy()));
		}
		return Step.stay(state);
	}

	/**
	 * Revokes a lost belief with the reason the store gives: another holder, or none,
	 * before the deadline is an administrator's doing; a store that still names this
	 * candidate refused for reasons of its own (a suspended ZooKeeper session, say). A
	 * follower now, on a follower's schedule: a store that keeps refusing renewals while
	 * it names this candidate must not make it take the lease again and lose it again at
	 * once, over and over.
	 */
	private Step lostAs(GroupState state, @Nullable Lease now) {
		if (!(state instanceof Lost lost)) {
			return Step.stay(state);
		}
		boolean forced = now != null && !now.isHeldBy(this.candidateId);
		RevocationReason reason = forced ? RevocationReason.FORCED_ELSEWHERE : RevocationReason.LEASE_LOST;
		return new Step(GroupState.FOLLOWING, Next.ROUND,
				effects(new Effect.Revoked(lost.belief().leadership(), reason)));
	}

	/** The deadline check found the belief's deadline passed. */
	private Step deadlinePassed(GroupState state, Event.DeadlinePassed passed) {
		if (state instanceof Leading leading && leading.belief() == passed.belief()
				&& !leading.belief().isHeldAt(passed.at())) {
			return expire(leading, passed.storeTrouble(), Next.NOW);
		}
		return Step.stay(state);
	}

	/**
	 * Ends a belief whose deadline passed: a store error if renewals failed or one is
	 * still hanging, otherwise the lease is lost (the process was paused or starved). The
	 * lease is given up as well as the belief: over a slow link, calls this side gave up
	 * on still reach the store and keep the lease alive there, and nobody else could lead
	 * while the link stays slow. The release is one more such call, and lands even if its
	 * answer comes too late. After store trouble, the others, whose links work, get the
	 * first try.
	 */
	private Step expire(Leading leading, boolean storeTrouble, Next next) {
		RevocationReason reason = storeTrouble ? RevocationReason.STORE_ERROR : RevocationReason.LEASE_LOST;
		Effect revoked = new Effect.Revoked(leading.belief().leadership(), reason);
		Effect stayOut = storeTrouble ? new Effect.StayOut(this.retryPeriodNanos, leading.lease().term()) : null;
		return new Step(new Releasing(leading.lease(), false), next, effects(revoked, stayOut));
	}

	/**
	 * A yield or a hand-over: stops believing and releases the lease, then stays out for
	 * twice the retry period: followers try within one, so one of them gets the lease
	 * first.
	 */
	private Step giveUp(GroupState state, RevocationReason reason) {
		Lease lease;
		if (state instanceof Leading leading) {
			lease = leading.lease();
		}
		else if (state instanceof Pending pending) {
			lease = pending.lease();
		}
		else {
			return Step.stay(state, Next.NOW);
		}
		Effect ended = endedBelief(state, reason);
		Effect stayOut = new Effect.StayOut(2 * this.retryPeriodNanos, lease.term());
		return new Step(new Releasing(lease, reason == RevocationReason.REBALANCED), Next.NOW, effects(ended, stayOut));
	}

	/**
	 * An administrator made another candidate lead, or cleared the lease: nothing of this
	 * instance's is left in the store to believe in or release.
	 */
	private Step forcedElsewhere(GroupState state) {
		if (state instanceof Stopped) {
			return Step.to(new Stopped(null), Next.NOW);
		}
		if (state instanceof NotStarted) {
			return Step.stay(state, Next.NOW);
		}
		return new Step(GroupState.FOLLOWING, Next.NOW, effects(endedBelief(state, RevocationReason.FORCED_ELSEWHERE)));
	}

	/** Stops competing and believing; a lease held stays until the elector leaves. */
	private Step stop(GroupState state) {
		if (state instanceof Stopped) {
			return Step.stay(state);
		}
		Lease lease = null;
		if (state instanceof Leading leading) {
			lease = leading.lease();
		}
		else if (state instanceof Pending pending) {
			lease = pending.lease();
		}
		else if (state instanceof Releasing releasing) {
			lease = releasing.lease();
		}
		Effect ended = endedBelief(state,
				(state instanceof Lost) ? RevocationReason.LEASE_LOST : RevocationReason.SHUTDOWN);
		return new Step(new Stopped(lease), Next.ROUND, effects(ended));
	}

	private Step released(GroupState state, Lease lease) {
		if (state instanceof Releasing releasing && releasing.lease() == lease) {
			return new Step(GroupState.FOLLOWING, Next.ROUND,
					releasing.requeue() ? effects(new Effect.Requeue()) : List.of());
		}
		return Step.stay(state);
	}

	/**
	 * When to try again after a failed call. A leader retries a failed renewal at once,
	 * then four times per retry period until its deadline: the belief lasts a renew
	 * deadline from the start of the last renewal that succeeded, and waiting a whole
	 * period between tries would throw away up to a period of it. (A call that hangs is
	 * bounded by the call timeout, so these tries never pile up.) Followers go back to
	 * the node's rounds, so that a store that is down is not pressed harder by them; a
	 * lease still to be released or waited out is tried again a retry period later.
	 */
	private Next retryAfterFailure(GroupState state, int consecutiveFailures) {
		if (state instanceof Leading) {
			return Next.after((consecutiveFailures <= 1) ? 0 : this.retryPeriodNanos / 4);
		}
		if (state instanceof Pending || state instanceof Releasing) {
			return Next.after(this.retryPeriodNanos);
		}
		return Next.ROUND;
	}

	/** The revocation of the belief a state holds, or null if it holds none. */
	private static @Nullable Effect endedBelief(GroupState state, RevocationReason reason) {
		if (state instanceof Leading leading) {
			return new Effect.Revoked(leading.belief().leadership(), reason);
		}
		if (state instanceof Lost lost) {
			return new Effect.Revoked(lost.belief().leadership(), reason);
		}
		return null;
	}

	private static List<Effect> effects(@Nullable Effect... effects) {
		return java.util.Arrays.stream(effects).filter(java.util.Objects::nonNull).toList();
	}

	/** What happened to a group: the input of {@link #next}. */
	sealed interface Event {

		/** The elector starts competing. */
		record Start() implements Event {
		}

		/**
		 * An acquisition took the lease.
		 *
		 * @param start when it was sent
		 * @param end when it was answered
		 * @param at now
		 */
		record Acquired(Lease lease, long start, long end, long at) implements Event {
		}

		/**
		 * The store extended the lease.
		 *
		 * @param lease the lease the renewal was sent for
		 * @param renewed the lease as renewed, which the next renewal or the release
		 * names
		 * @param before the belief when the renewal was sent, or null while pending
		 * @param start when it was sent
		 * @param at now
		 */
		record Renewed(Lease lease, Lease renewed, @Nullable Belief before, long start, long at) implements Event {

			/** A renewal that handed the same lease back. */
			Renewed(Lease lease, @Nullable Belief before, long start, long at) {
				this(lease, lease, before, start, at);
			}

		}

		/** The store refused to renew the lease. */
		record Refused(Lease lease) implements Event {
		}

		/**
		 * The lease as read after a refused renewal.
		 *
		 * @param now the lease, or null if unknown or never led
		 */
		record LostAs(@Nullable Lease now) implements Event {
		}

		/**
		 * The deadline check of a belief ran after its deadline.
		 *
		 * @param storeTrouble whether calls failed lately or one is still on its way
		 */
		record DeadlinePassed(Belief belief, boolean storeTrouble, long at) implements Event {
		}

		/** A yield, or a hand-over when the reason is {@code REBALANCED}. */
		record GiveUp(RevocationReason reason) implements Event {
		}

		/** An administrator made another candidate lead, or cleared the lease. */
		record ForcedElsewhere() implements Event {
		}

		/** The elector stops. */
		record Stop() implements Event {
		}

		/** The stopped elector leaves the group: a lease it still holds is released. */
		record Leave() implements Event {
		}

		/** The store released the lease. */
		record Released(Lease lease) implements Event {
		}

		/** A store call failed; the state stays, the next step is a retry. */
		record Failed(int consecutiveFailures) implements Event {
		}

	}

	/** What the elector carries out after a transition, in order. */
	sealed interface Effect {

		/** Tell the listeners of a new leadership. */
		record Granted(Leadership leadership) implements Effect {
		}

		/** Tell the listeners that a leadership ended. */
		record Revoked(Leadership leadership, RevocationReason reason) implements Effect {
		}

		/** Stay out of the race for a while after giving up a lease of this term. */
		record StayOut(long durationNanos, long term) implements Effect {
		}

		/** Say that a lease was given up because the store answered too late. */
		record AnsweredTooLate(Lease lease, long tookNanos) implements Effect {
		}

		/** Release this lease now: one an elector that is not competing holds. */
		record Release(Lease lease) implements Effect {
		}

		/** Queue again at the end of the store's line (after a hand-over). */
		record Requeue() implements Effect {
		}

		/** Read the group to learn why the store refused a renewal. */
		record ReadWhy() implements Effect {
		}

	}

	/**
	 * When the elector takes its next step: in the node's {@linkplain NodeRounds rounds}
	 * (a leader's renewal, a follower's look), or in an attempt of its own after a delay.
	 */
	record Next(boolean round, long delayNanos) {

		static final Next ROUND = new Next(true, 0);

		static final Next NOW = new Next(false, 0);

		static Next after(long delayNanos) {
			return new Next(false, Math.max(0, delayNanos));
		}

	}

	/** A transition's result. */
	record Step(GroupState state, Next next, List<Effect> effects) {

		static Step to(GroupState state, Next next, Effect... effects) {
			return new Step(state, next, List.of(effects));
		}

		static Step stay(GroupState state) {
			return new Step(state, Next.ROUND, List.of());
		}

		static Step stay(GroupState state, Next next, Effect... effects) {
			return new Step(state, next, List.of(effects));
		}

		boolean has(Class<? extends Effect> type) {
			return this.effects.stream().anyMatch(type::isInstance);
		}

	}

}
