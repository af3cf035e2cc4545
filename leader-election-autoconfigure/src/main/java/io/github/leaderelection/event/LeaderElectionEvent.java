package io.github.leaderelection.event;

import io.github.leaderelection.LeaderElection;
import org.springframework.context.ApplicationEvent;

/**
 * Base class of the events about the election of one group. The source is that group's
 * {@link LeaderElection}.
 *
 * <p>
 * Events are published on the election's notification thread, in the order the changes
 * happened, never on the thread that renews the lease: a slow listener delays later
 * events, never a renewal.
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
