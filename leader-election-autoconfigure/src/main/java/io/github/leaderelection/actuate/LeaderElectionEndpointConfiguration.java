package io.github.leaderelection.actuate;

import io.github.leaderelection.LeaderElectionRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Internal: the {@code leaderelection} endpoint and its web extension, imported by
 * {@code LeaderElectionEndpointAutoConfiguration} under its own conditions; not for
 * applications to import.
 */
@Configuration(proxyBeanMethods = false)
public final class LeaderElectionEndpointConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LeaderElectionEndpoint leaderElectionEndpoint(LeaderElectionRegistry registry,
			ObjectProvider<LeaderElectionParticipants> participants) {
		return new LeaderElectionEndpoint(registry, participants.getIfUnique());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(LeaderElectionEndpoint.class)
	@ConditionalOnAvailableEndpoint(exposure = EndpointExposure.WEB)
	LeaderElectionEndpointWebExtension leaderElectionEndpointWebExtension(LeaderElectionEndpoint endpoint) {
		return new LeaderElectionEndpointWebExtension(endpoint);
	}

}
