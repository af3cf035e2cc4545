package io.github.leaderelection.metrics;

import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Internal: the beans of {@code LeaderElectionObservationAutoConfiguration}, which
 * imports this class under its own conditions; not for applications to import. The
 * observation of every store call and of every transition of this instance.
 */
@Configuration(proxyBeanMethods = false)
public final class LeaderElectionObservationConfiguration {

	@Bean
	@ConditionalOnMissingBean
	static ObservedLeaseStorePostProcessor observedLeaseStorePostProcessor(
			ObjectProvider<ObservationRegistry> registry) {
		return new ObservedLeaseStorePostProcessor(registry::getIfUnique);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(ObservationRegistry.class)
	LeadershipObservations leadershipObservations(ObservationRegistry registry) {
		return new LeadershipObservations(registry);
	}

}
