package io.github.leaderelection.event;

import java.util.Objects;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.Leadership;

/**
 * Published when this instance became the leader of a group.
 */
public class LeaderGrantedEvent extends LeaderElectionEvent {

	private final Leadership leadership;

	public LeaderGrantedEvent(LeaderElection election, Leadership leadership) {
		super(election);
		this.leadership = Objects.requireNonNull(leadership, "leadership");
	}

	/**
	 * The leadership granted; ask {@link Leadership#isValid()} before acting on it later.
	 */
	public Leadership leadership() {
		return this.leadership;
	}

	/** This instance's candidate id. */
	public String candidateId() {
		return this.leadership.candidateId();
	}

	/** The term granted: the fencing token for writes made as this leader. */
	public long term() {
		return this.leadership.term();
	}

	@Override
	public String toString() {
		return "LeaderGrantedEvent[" + this.leadership + "]";
	}

}
