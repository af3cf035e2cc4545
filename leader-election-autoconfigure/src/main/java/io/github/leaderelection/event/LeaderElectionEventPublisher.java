package io.github.leaderelection.event;

import java.util.Objects;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.LeaderInfo;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.context.ApplicationEventPublisher;

/**
 * Turns the leadership changes of a {@link LeaderElectionRegistry} into
 * {@link LeaderGrantedEvent}, {@link LeaderRevokedEvent} and {@link LeaderChangedEvent}.
 * As a {@link LeaderElectionListener} it is called on the election's event threads (one
 * group's changes in order, different groups independently), so the events are published
 * there.
 */
class LeaderElectionEventPublisher implements LeaderElectionListener {

	private static final Logger logger = LoggerFactory.getLogger(LeaderElectionEventPublisher.class);

	private final ApplicationEventPublisher publisher;

	private final LeaderElectionRegistry registry;

	LeaderElectionEventPublisher(ApplicationEventPublisher publisher, LeaderElectionRegistry registry) {
		this.publisher = Objects.requireNonNull(publisher, "publisher");
		this.registry = Objects.requireNonNull(registry, "registry");
	}

	@Override
	public void granted(Leadership leadership) {
		LeaderElection election = election(leadership.group());
		if (election != null) {
			this.publisher.publishEvent(new LeaderGrantedEvent(election, leadership));
		}
	}

	@Override
	public void revoked(Leadership leadership, RevocationReason reason) {
		LeaderElection election = election(leadership.group());
		if (election != null) {
			this.publisher.publishEvent(new LeaderRevokedEvent(election, leadership, reason));
		}
	}

	@Override
	public void leaderChanged(String group, @Nullable LeaderInfo leader) {
		LeaderElection election = election(group);
		if (election != null) {
			this.publisher.publishEvent(new LeaderChangedEvent(election, leader));
		}
	}

	private @Nullable LeaderElection election(String group) {
		// The registry notifies only about groups it has joined, so this finds one.
		LeaderElection election = this.registry.find(group).orElse(null);
		if (election == null) {
			logger.warn("Not publishing a leadership event of group '{}': the registry does not know the group", group);
		}
		return election;
	}

	@Override
	public String toString() {
		return "LeaderElectionEventPublisher";
	}

}
