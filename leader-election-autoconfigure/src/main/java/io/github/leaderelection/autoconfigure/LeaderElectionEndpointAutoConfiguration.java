package io.github.leaderelection.autoconfigure;

import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.actuate.LeaderElectionEndpoint;
import io.github.leaderelection.actuate.LeaderElectionEndpointConfiguration;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Import;

/**
 * {@link EnableAutoConfiguration Auto-configuration} for the {@code leaderelection}
 * endpoint. Its write operations follow the endpoint's access, read-only unless
 * {@code management.endpoint.leaderelection.access=unrestricted}.
 */
@AutoConfiguration(after = LeaderElectionAutoConfiguration.class)
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnBean(LeaderElectionRegistry.class)
@ConditionalOnAvailableEndpoint(LeaderElectionEndpoint.class)
@Import(LeaderElectionEndpointConfiguration.class)
public final class LeaderElectionEndpointAutoConfiguration {

}
