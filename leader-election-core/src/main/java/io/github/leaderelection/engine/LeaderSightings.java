package io.github.leaderelection.engine;

import java.util.Objects;

import io.github.leaderelection.LeaderInfo;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.spi.Lease;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What this instance says and sees of a group's leader: its own grants and revocations,
 * logged and told to the listeners; the leader it saw last (told to the listeners as it
 * changes); another process that uses this candidate id (see
 * {@link DuplicateIdDetector}). Guarded by the elector's lock, except {@link #report},
 * which logs outside it.
 */
final class LeaderSightings {

	private static final Logger logger = LoggerFactory.getLogger(GroupElector.class);

	private final String group;

	private final String candidateId;

	private final Notifier notifier;

	private final DuplicateIdDetector duplicateId;

	private @Nullable LeaderInfo leader;

	LeaderSightings(String group, String candidateId, Notifier notifier, long retryPeriodNanos) {
		this.group = group;
		this.candidateId = candidateId;
		this.notifier = notifier;
		this.duplicateId = new DuplicateIdDetector(group, candidateId, retryPeriodNanos);
	}

	/** Logs a grant to this instance and tells the listeners. */
	void granted(Leadership leadership) {
		logger.info("Leadership of group '{}' granted to candidate '{}' (term {})", this.group, this.candidateId,
				leadership.term());
		this.notifier.publish(this.group, "granted " + leadership, (listener) -> listener.granted(leadership));
		saw(new LeaderInfo(this.group, this.candidateId, leadership.term()));
	}

	/** Logs a revocation from this instance and tells the listeners. */
	void revoked(Leadership leadership, RevocationReason reason) {
		logger.info("Leadership of group '{}' revoked from candidate '{}' (term {}): {}", this.group, this.candidateId,
				leadership.term(), reason);
		this.notifier.publish(this.group, "revoked " + leadership, (listener) -> listener.revoked(leadership, reason));
		saw(null);
	}

	/** The leader seen last, or null if none. */
	@Nullable LeaderInfo leader() {
		return this.leader;
	}

	/** Records the leader seen now, telling the listeners if it changed. */
	void saw(@Nullable LeaderInfo now) {
		if (Objects.equals(this.leader, now)) {
			return;
		}
		this.leader = now;
		this.notifier.publish(this.group, "leader changed in " + this.group,
				(listener) -> listener.leaderChanged(this.group, now));
	}

	/** This candidate took the lease in the given term. */
	void acquired(long term) {
		this.duplicateId.acquired(term);
	}

	/**
	 * Looks for another process holding the lease under this candidate id.
	 * @param displaced whether the lease was read because a renewal was refused
	 */
	DuplicateIdDetector.Finding ownIdSeen(@Nullable Lease lease, long nowNanos, boolean displaced) {
		return this.duplicateId.observe(lease, nowNanos, displaced);
	}

	/**
	 * Whether to leave the lease seen alone for now: it may be another process's under
	 * this candidate id (see {@link DuplicateIdDetector#holdsOff}).
	 */
	boolean holdsOff(@Nullable Lease lease, long nowNanos) {
		return this.duplicateId.holdsOff(lease, nowNanos);
	}

	/** Why the elector stands aside (another process uses its id), or null. */
	@Nullable String conflict() {
		return this.duplicateId.conflict();
	}

	/** Logs what {@link #ownIdSeen} found; called outside the elector's lock. */
	void report(DuplicateIdDetector.Finding finding, @Nullable Lease lease) {
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

}
