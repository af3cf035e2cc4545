package io.github.leaderelection.sample;

import io.github.leaderelection.event.LeaderChangedEvent;
import io.github.leaderelection.event.LeaderGrantedEvent;
import io.github.leaderelection.event.LeaderRevokedEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * Logs what this instance learns about leadership, as an application would react to it.
 */
@Component
public class LeadershipLogger {

	private static final Logger logger = LoggerFactory.getLogger(LeadershipLogger.class);

	@EventListener
	public void granted(LeaderGrantedEvent event) {
		logger.info(">>> This instance now leads group '{}' in term {}", event.group(), event.term());
	}

	@EventListener
	public void revoked(LeaderRevokedEvent event) {
		logger.info("<<< This instance no longer leads group '{}' (term {}, {})", event.group(), event.term(),
				event.reason());
	}

	@EventListener
	public void leaderChanged(LeaderChangedEvent event) {
		logger.info("--- Leader of group '{}' is now {}", event.group(),
				event.leader()
					.map((leader) -> leader.candidateId() + " (term " + leader.term() + ")")
					.orElse("unknown"));
	}

}
