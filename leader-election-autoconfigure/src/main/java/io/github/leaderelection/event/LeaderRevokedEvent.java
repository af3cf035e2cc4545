package io.github.leaderelection.event;

import java.util.Objects;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;

/**
 * Published when this instance stopped leading a group. By then,
 * {@link LeaderElection#isLeader()} already answers {@code false}.
 */
public class LeaderRevokedEvent extends LeaderElectionEvent {

	private final Leadership leadership;

	private final RevocationReason reason;

	public LeaderRevokedEvent(LeaderElection election, Leadership leadership, RevocationReason reason) {
		super(election);
		this.leadership = Objects.requireNonNull(leadership, "leadership");
		this.reason = Objects.requireNonNull(reason, "reason");
	}

	/** The leadership that ended. */
	public Leadership leadership() {
		return this.leadership;
	}

	/** This instance's candidate id. */
	public String candidateId() {
		return this.leadership.candidateId();
	}

	/** The term that ended. */
	public long term() {
		return this.leadership.term();
	}

	/** Why this instance stopped leading. */
	public RevocationReason reason() {
		return this.reason;
	}

	@Override
	public String toString() {
		return "LeaderRevokedEvent[" + this.leadership + ", reason=" + this.reason + "]";
	}

}
