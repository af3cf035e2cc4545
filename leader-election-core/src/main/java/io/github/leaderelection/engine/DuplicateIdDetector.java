package io.github.leaderelection.engine;

import io.github.leaderelection.spi.Lease;
import org.jspecify.annotations.Nullable;

/**
 * Notices another live process that uses the same candidate id in a group. Two such
 * processes take the lease from each other forever (a candidate may always re-take a
 * lease under its own id), each in a new term, and neither gets to act. The sign: after
 * this elector has acquired a term, the store shows this id holding a newer term that
 * this elector never acquired. An administrator forcing this very candidate leaves the
 * same sign (a forced term is named, never acquired), and an operator repeating force,
 * yield and re-election quickly leaves it again and again, whichever instance was asked.
 * What tells them apart is that a forced term is never acted on, so nobody renews it,
 * while another process renews the term it took. So a second such term within two lease
 * durations makes the elector stand aside and watch it: if its lease end moves later
 * (renewed), another process uses the id; if it does not within a few retry periods, it
 * was an administrator's, and the elector competes again (taking the forced lease, as a
 * forced candidate does). A process restarted under the same id sees its previous
 * incarnation's lease before it has acquired anything, so it is never taken for a
 * duplicate.
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

	/**
	 * How long to watch a suspect term for a renewal: a holder renews every retry period,
	 * so a few of them without one mean nobody holds it.
	 */
	private final long watchNanos;

	/**
	 * How far a suspect lease's end must move later to count as renewed: a renewal moves
	 * it by about a retry period, read latency and jitter by far less.
	 */
	private final long renewalShiftNanos;

	/** The highest term this elector acquired itself; 0 before its first acquire. */
	private long highestOwnTerm;

	/** The last term seen under this id that this elector never acquired, 0 if none. */
	private long foreignTerm;

	private long foreignTermSeenNanos;

	/** Why the elector does not compete for the group, or null while it does. */
	private @Nullable String conflict;

	/** A term being watched for a renewal, or null when none. */
	private @Nullable Suspect suspect;

	DuplicateIdDetector(String group, String candidateId, long windowNanos, long retryPeriodNanos) {
		this.group = group;
		this.candidateId = candidateId;
		this.windowNanos = windowNanos;
		this.watchNanos = 3 * retryPeriodNanos;
		this.renewalShiftNanos = retryPeriodNanos / 2;
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
	 * Whether the elector must not compete now: a conflict, or a suspect term being
	 * watched.
	 */
	boolean standsAside() {
		return this.conflict != null || this.suspect != null;
	}

	/** Takes in a lease read from the store at the given instant. */
	Finding observe(@Nullable Lease lease, long nowNanos) {
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
		Suspect watched = this.suspect;
		if (watched != null) {
			if (foreignLiveLease && lease.term() == watched.term()) {
				if (endOf(lease, nowNanos) - watched.end() > this.renewalShiftNanos) {
					this.suspect = null;
					this.conflict = "another process uses candidate id '" + this.candidateId + "': it holds group '"
							+ this.group + "' in term " + lease.term() + ", which this process never acquired";
					return Finding.CONFLICT_STARTED;
				}
				if (nowNanos - watched.since() < this.watchNanos) {
					return Finding.NOTHING;
				}
			}
			// Not renewed, or gone: an administrator's term. The next forced term is a
			// first sighting again.
			this.suspect = null;
			this.foreignTerm = 0;
			return Finding.NOTHING;
		}
		if (!foreignLiveLease || lease.term() == this.foreignTerm) {
			return Finding.NOTHING;
		}
		boolean again = this.foreignTerm != 0 && nowNanos - this.foreignTermSeenNanos < this.windowNanos;
		this.foreignTerm = lease.term();
		this.foreignTermSeenNanos = nowNanos;
		if (again) {
			this.suspect = new Suspect(lease.term(), endOf(lease, nowNanos), nowNanos);
		}
		return Finding.NOTHING;
	}

	/** Where the lease ends on this elector's clock, as near as a read can tell. */
	private static long endOf(Lease lease, long nowNanos) {
		return nowNanos + lease.expiresIn().toNanos();
	}

	/**
	 * A term under this id that this elector never acquired, seen soon after another.
	 *
	 * @param term the term
	 * @param end where its lease ended when first seen, on this elector's clock
	 * @param since when it was first seen
	 */
	private record Suspect(long term, long end, long since) {

	}

}
