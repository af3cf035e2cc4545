package io.github.leaderelection.engine;

import io.github.leaderelection.spi.Lease;
import org.jspecify.annotations.Nullable;

/**
 * Notices another live process that uses the same candidate id in a group. Two such
 * processes would take the lease from each other forever (a candidate may always re-take
 * a lease under its own id), each in a new term, and neither would get to act.
 *
 * <p>
 * The first sign: a renewal of this elector's lease is refused, and the store shows this
 * id holding a newer term that this elector never acquired. An operator does that too, by
 * forcing this very candidate while its renewal is on its way (a clear, or a force of
 * another candidate, then a force of this one), so the sign only makes the term a
 * suspect: the elector leaves it alone for a few retry periods and reads it again in its
 * rounds. A forced lease is renewed by nobody: its end stays where it was, and the
 * elector then takes it, as a forced leader does. A lease that another process holds
 * moves its end with each of that process's renewals: that is the conflict. A process
 * restarted under the same id sees its previous incarnation's lease before it has
 * acquired anything, so it is never taken for a duplicate; a newer term under this id
 * seen as a follower is an operator's force, never a suspect.
 *
 * <p>
 * A lease whose holder may not act before it ends (ZooKeeper's forced lease, whose end is
 * the holder's session and moves with every read) is never judged by its end.
 *
 * <p>
 * The elector that notices stands aside: it stops acquiring the group while a live lease
 * under this id names a term it never acquired, and competes again once that lease is
 * gone (the other process stopped or died). The other process keeps leading in its term.
 * Not thread-safe: the elector calls it under its lock.
 */
final class DuplicateIdDetector {

	/** What an observation changed. */
	enum Finding {

		NOTHING, CONFLICT_STARTED, CONFLICT_ENDED

	}

	private final String group;

	private final String candidateId;

	/** How long a suspect term is left alone: long enough for a holder to renew twice. */
	private final long holdNanos;

	/** How far a suspect lease's end may move without a renewal: read timing noise. */
	private final long toleranceNanos;

	/** The highest term this elector acquired itself; 0 before its first acquire. */
	private long highestOwnTerm;

	/**
	 * A newer term under this id read after a refusal, watched for renewals; 0 if none.
	 */
	private long suspectTerm;

	private long suspectSinceNanos;

	private long suspectEndNanos;

	/** Why the elector does not compete for the group, or null while it does. */
	private @Nullable String conflict;

	/**
	 * @param retryPeriodNanos how often the elector reads the group while it follows, and
	 * the other process renews
	 */
	DuplicateIdDetector(String group, String candidateId, long retryPeriodNanos) {
		this.group = group;
		this.candidateId = candidateId;
		this.holdNanos = 3 * retryPeriodNanos;
		this.toleranceNanos = retryPeriodNanos / 2;
	}

	void acquired(long term) {
		this.highestOwnTerm = Math.max(this.highestOwnTerm, term);
		if (term >= this.suspectTerm) {
			this.suspectTerm = 0;
		}
	}

	long highestOwnTerm() {
		return this.highestOwnTerm;
	}

	/** Why the elector stands aside, or null while it competes. */
	@Nullable String conflict() {
		return this.conflict;
	}

	/**
	 * Whether to leave a lease seen now alone rather than take it: a suspect term, still
	 * watched for renewals.
	 */
	boolean holdsOff(@Nullable Lease lease, long nowNanos) {
		return lease != null && this.suspectTerm != 0 && lease.term() == this.suspectTerm
				&& nowNanos - this.suspectSinceNanos < this.holdNanos;
	}

	/**
	 * Takes in a lease read from the store at the given instant.
	 * @param displaced whether it was read because the store refused to renew this
	 * elector's lease: only then may a newer term under this id be another process's
	 */
	Finding observe(@Nullable Lease lease, long nowNanos, boolean displaced) {
		boolean foreignLiveLease = lease != null && lease.isHeldBy(this.candidateId) && !lease.isExpired()
				&& lease.term() > this.highestOwnTerm && this.highestOwnTerm > 0;
		if (this.conflict != null) {
			if (foreignLiveLease) {
				return Finding.NOTHING;
			}
			this.conflict = null;
			return Finding.CONFLICT_ENDED;
		}
		if (!foreignLiveLease) {
			this.suspectTerm = 0;
			return Finding.NOTHING;
		}
		long endNanos = nowNanos + lease.expiresIn().toNanos();
		if (lease.term() == this.suspectTerm) {
			boolean renewed = endNanos - this.suspectEndNanos > this.toleranceNanos
					&& lease.activeIn().compareTo(lease.expiresIn()) < 0;
			if (!renewed) {
				return Finding.NOTHING;
			}
			this.suspectTerm = 0;
			this.conflict = "another process uses candidate id '" + this.candidateId + "': it holds group '"
					+ this.group + "' in term " + lease.term() + ", which this process never acquired";
			return Finding.CONFLICT_STARTED;
		}
		if (displaced) {
			this.suspectTerm = lease.term();
			this.suspectSinceNanos = nowNanos;
			this.suspectEndNanos = endNanos;
		}
		else {
			this.suspectTerm = 0;
		}
		return Finding.NOTHING;
	}

}
