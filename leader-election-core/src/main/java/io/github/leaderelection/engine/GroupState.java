package io.github.leaderelection.engine;

import io.github.leaderelection.Leadership;
import io.github.leaderelection.spi.Lease;
import org.jspecify.annotations.Nullable;

/**
 * Where the election of one group stands on this instance: one value of a closed type,
 * replaced as a whole, and only by {@link GroupMachine}. Leases and beliefs are compared
 * by identity: a lease taken again in the same term is another lease.
 */
sealed interface GroupState {

	/** Created, not yet competing. */
	GroupState NOT_STARTED = new NotStarted();

	/** Competing, with no lease of its own in the store. */
	GroupState FOLLOWING = new Following();

	/** The phase an operator sees, apart from what the following policies add. */
	GroupPhase phase(long nowNanos);

	/** See {@link #NOT_STARTED}. */
	record NotStarted() implements GroupState {

		@Override
		public GroupPhase phase(long nowNanos) {
			return GroupPhase.NOT_STARTED;
		}

	}

	/** See {@link #FOLLOWING}. */
	record Following() implements GroupState {

		@Override
		public GroupPhase phase(long nowNanos) {
			return GroupPhase.FOLLOWING;
		}

	}

	/**
	 * Took the lease before the previous holder's had surely run out: acts on it once a
	 * renewal that starts at or after {@code activeFromNanos} succeeds.
	 */
	record Pending(Lease lease, long activeFromNanos) implements GroupState {

		@Override
		public GroupPhase phase(long nowNanos) {
			return GroupPhase.PENDING;
		}

	}

	/**
	 * Holds the lease and believes it leads until the belief's deadline; past it, the
	 * belief is over (losing) until the deadline check revokes it.
	 */
	record Leading(Lease lease, Belief belief) implements GroupState {

		@Override
		public GroupPhase phase(long nowNanos) {
			return this.belief.isHeldAt(nowNanos) ? GroupPhase.LEADING : GroupPhase.LOSING;
		}

	}

	/**
	 * The store refused to renew: the belief ended at that moment, and its revocation
	 * waits for a read of the group to say why (another holder: forced elsewhere).
	 */
	record Lost(Belief belief) implements GroupState {

		@Override
		public GroupPhase phase(long nowNanos) {
			return GroupPhase.LOSING;
		}

	}

	/**
	 * Gives a lease up that it no longer believes in.
	 *
	 * @param requeue whether to queue again at the end of the store's line once released
	 * (a hand-over must go to another candidate)
	 */
	record Releasing(Lease lease, boolean requeue) implements GroupState {

		@Override
		public GroupPhase phase(long nowNanos) {
			return GroupPhase.RELEASING;
		}

	}

	/**
	 * Stopped competing.
	 *
	 * @param lease a lease still to release when leaving, or null
	 */
	record Stopped(@Nullable Lease lease) implements GroupState {

		@Override
		public GroupPhase phase(long nowNanos) {
			return GroupPhase.STOPPED;
		}

	}

	/**
	 * A belief in leadership that holds until a deadline on the monotonic clock.
	 *
	 * @param grantedNanos when the leadership was granted
	 */
	record Belief(Leadership leadership, long deadline, long grantedNanos) {

		boolean isHeldAt(long nanoTime) {
			return nanoTime - this.deadline < 0;
		}

		Belief extendedTo(long newDeadline) {
			return new Belief(this.leadership, newDeadline, this.grantedNanos);
		}

	}

}
