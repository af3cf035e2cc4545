package io.github.leaderelection.event;

import io.github.leaderelection.LeaderElectionRegistry;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Internal: the publisher of the leadership events, imported by
 * {@code LeaderElectionAutoConfiguration} under its own conditions; not for applications
 * to import.
 */
@Configuration(proxyBeanMethods = false)
public final class LeaderElectionEventConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LeaderElectionEventPublisher leaderElectionEventPublisher(ApplicationEventPublisher applicationEventPublisher,
			LeaderElectionRegistry registry) {
		return new LeaderElectionEventPublisher(applicationEventPublisher, registry);
	}

}
