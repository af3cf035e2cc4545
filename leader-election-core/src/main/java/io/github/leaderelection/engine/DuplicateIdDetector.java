package io.github.leaderelection.engine;

import io.github.leaderelection.spi.Lease;
import org.jspecify.annotations.Nullable;

/**
 * Notices another live process that uses the same candidate id in a group. Two such
 * processes take the lease from each other forever (a candidate may always re-take a
 * lease under its own id), each in a new term, and neither gets to act. The sign: a
 * renewal of this elector's lease is refused, and the store shows this id holding a newer
 * term that this elector never acquired. An administrator cannot do that in one step: a
 * forced leader's store leaves a lease that already names the candidate alone, so a term
 * forced on this id is one this elector sees as a follower, which never counts. Seen
 * once, the sign may still be an administrator's clear followed at once by a force of
 * this very candidate, so it counts only when it happens again within two lease
 * durations. A process restarted under the same id sees its previous incarnation's lease
 * before it has acquired anything, so it is never taken for a duplicate.
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

	private final long windowNanos;

	/** The highest term this elector acquired itself; 0 before its first acquire. */
	private long highestOwnTerm;

	/** The last term seen under this id that this elector never acquired, 0 if none. */
	private long foreignTerm;

	private long foreignTermSeenNanos;

	/** Why the elector does not compete for the group, or null while it does. */
	private @Nullable String conflict;

	DuplicateIdDetector(String group, String candidateId, long windowNanos) {
		this.group = group;
		this.candidateId = candidateId;
		this.windowNanos = windowNanos;
	}

	void acquired(long term) {
		this.highestOwnTerm = Math.max(this.highestOwnTerm, term);
	}

	long highestOwnTerm() {
		return this.highestOwnTerm;
	}

	/** Why the elector stands aside, or null while it competes. */
	@Nullable String conflict() {
		return this.conflict;
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
			this.foreignTerm = 0;
			return Finding.CONFLICT_ENDED;
		}
		if (!foreignLiveLease || !displaced || lease.term() == this.foreignTerm) {
			return Finding.NOTHING;
		}
		boolean again = this.foreignTerm != 0 && nowNanos - this.foreignTermSeenNanos < this.windowNanos;
		this.foreignTerm = lease.term();
		this.foreignTermSeenNanos = nowNanos;
		if (!again) {
			return Finding.NOTHING;
		}
		this.conflict = "another process uses candidate id '" + this.candidateId + "': it holds group '" + this.group
				+ "' in term " + lease.term() + ", which this process never acquired";
		return Finding.CONFLICT_STARTED;
	}

}
