package io.github.leaderelection.event;

import io.github.leaderelection.LeaderElection;
import org.springframework.context.ApplicationEvent;

/**
 * Base class of the events about the election of one group. The source is that group's
 * {@link LeaderElection}.
 *
 * <p>
 * Events are published on the election's event threads, never on a thread that renews a
 * lease: one group's events in the order its changes happened, different groups' events
 * independently. A slow listener delays its group's later events, never a renewal and
 * never another group.
 */
public abstract class LeaderElectionEvent extends ApplicationEvent {

	protected LeaderElectionEvent(LeaderElection election) {
		super(election);
	}

	/** The election of the group this event is about. */
	public LeaderElection election() {
		return (LeaderElection) getSource();
	}

	/** The group this event is about. */
	public String group() {
		return election().group();
	}

}
