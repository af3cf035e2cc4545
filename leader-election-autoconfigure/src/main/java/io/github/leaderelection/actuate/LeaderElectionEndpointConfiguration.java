package io.github.leaderelection.actuate;

import java.time.Clock;

import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.autoconfigure.LeaderElectionProperties;
import io.github.leaderelection.scheduling.ScheduledJobs;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;

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
			ObjectProvider<LeaderElectionParticipants> participants,
			ObjectProvider<LeaderElectionProperties> properties, ObjectProvider<OperatorActionCounter> counters,
			ObjectProvider<ScheduledJobs> jobs) {
		LeaderElectionProperties.Endpoint limits = properties.getIfAvailable(LeaderElectionProperties::new)
			.getEndpoint();
		OperatorActionCounter counter = counters.getIfAvailable(() -> (group, action, outcome) -> {
		});
		LeaderElectionEndpoint endpoint = new LeaderElectionEndpoint(registry, participants.getIfUnique(),
				Clock.systemUTC(), new OperatorActions(limits.getMaxActionsPerGroup(), limits.getActionWindow()),
				counter);
		endpoint.showJobs(jobs.getIfAvailable());
		return endpoint;
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(LeaderElectionEndpoint.class)
	@ConditionalOnAvailableEndpoint(exposure = EndpointExposure.WEB)
	LeaderElectionEndpointWebExtension leaderElectionEndpointWebExtension(LeaderElectionEndpoint endpoint) {
		return new LeaderElectionEndpointWebExtension(endpoint);
	}

	/** Counts the operators' actions with Micrometer, when it is there. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	static class OperatorActionMetricsConfiguration {

		@Bean
		@ConditionalOnMissingBean
		OperatorActionCounter leaderElectionOperatorActionCounter(ObjectProvider<MeterRegistry> registries) {
			return (group, action,
					outcome) -> registries.forEach((registry) -> Counter.builder("leader.election.operator.actions")
						.description("Administrator's actions asked through the leaderelection endpoint")
						.tag("group", group)
						.tag("action", action)
						.tag("outcome", outcome)
						.register(registry)
						.increment());
		}

	}

	/** Caps the size of request bodies to the endpoint on a servlet web server. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = Type.SERVLET)
	@ConditionalOnClass(FilterRegistrationBean.class)
	@ConditionalOnAvailableEndpoint(endpoint = LeaderElectionEndpoint.class, exposure = EndpointExposure.WEB)
	static class RequestSizeLimitConfiguration {

		@Bean
		FilterRegistrationBean<RequestSizeLimitFilter> leaderElectionEndpointRequestSizeLimit(
				ObjectProvider<LeaderElectionProperties> properties, ObjectProvider<PathMappedEndpoints> endpoints) {
			long maxBytes = properties.getIfAvailable(LeaderElectionProperties::new)
				.getEndpoint()
				.getMaxRequestSize()
				.toBytes();
			RequestSizeLimitFilter filter = new RequestSizeLimitFilter(() -> {
				PathMappedEndpoints mapped = endpoints.getIfAvailable();
				return (mapped != null) ? mapped.getPath(EndpointId.of("leaderelection")) : null;
			}, maxBytes);
			FilterRegistrationBean<RequestSizeLimitFilter> registration = new FilterRegistrationBean<>(filter);
			registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
			return registration;
		}

	}

}
