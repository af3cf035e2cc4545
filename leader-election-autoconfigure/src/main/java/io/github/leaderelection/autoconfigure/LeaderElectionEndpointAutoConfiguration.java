package io.github.leaderelection.autoconfigure;

import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.actuate.LeaderElectionEndpoint;
import io.github.leaderelection.actuate.LeaderElectionEndpointWebExtension;
import io.github.leaderelection.actuate.LeaderElectionParticipants;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * {@link EnableAutoConfiguration Auto-configuration} for the {@code leaderelection}
 * endpoint. Its write operations follow the endpoint's access, read-only unless
 * {@code management.endpoint.leaderelection.access=unrestricted}.
 */
@AutoConfiguration(after = LeaderElectionAutoConfiguration.class)
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnBean(LeaderElectionRegistry.class)
@ConditionalOnAvailableEndpoint(LeaderElectionEndpoint.class)
public final class LeaderElectionEndpointAutoConfiguration {

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
