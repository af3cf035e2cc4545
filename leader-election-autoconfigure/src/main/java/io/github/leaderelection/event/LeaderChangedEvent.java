package io.github.leaderelection.event;

import java.util.Optional;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderInfo;
import org.jspecify.annotations.Nullable;

/**
 * Published when the leader this instance observes for a group changed: another instance
 * took over, this instance did, or the group has no known leader any more.
 */
public class LeaderChangedEvent extends LeaderElectionEvent {

	private final @Nullable LeaderInfo leader;

	/**
	 * Creates an event.
	 * @param leader the new leader, or {@code null} when the group has no known leader
	 */
	public LeaderChangedEvent(LeaderElection election, @Nullable LeaderInfo leader) {
		super(election);
		this.leader = leader;
	}

	/**
	 * The new leader with its candidate id and term; empty when the group has no known
	 * leader.
	 */
	public Optional<LeaderInfo> leader() {
		return Optional.ofNullable(this.leader);
	}

	/** Whether the new leader is this instance. */
	public boolean isThisInstance() {
		return this.leader != null && this.leader.candidateId().equals(election().candidateId());
	}

	@Override
	public String toString() {
		return "LeaderChangedEvent[group=" + group() + ", leader=" + this.leader + "]";
	}

}
