package io.github.leaderelection.metrics;

import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.scheduling.ScheduledJobs;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Internal: the beans of {@code LeaderElectionMetricsAutoConfiguration}, which imports
 * this class under its own conditions; not for applications to import. The meters of the
 * elections, and the timing of every lease store bean's requests.
 */
@Configuration(proxyBeanMethods = false)
public final class LeaderElectionMetricsConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LeaderElectionMetrics leaderElectionMetrics(LeaderElectionRegistry registry) {
		return new LeaderElectionMetrics(registry);
	}

	@Bean
	@ConditionalOnBean(ScheduledJobs.class)
	LeaderOnlyJobMetrics leaderOnlyJobMetrics(ScheduledJobs jobs) {
		return new LeaderOnlyJobMetrics(jobs);
	}

	@Bean
	static TimedLeaseStorePostProcessor timedLeaseStorePostProcessor(ObjectProvider<LeaderElectionMetrics> metrics) {
		return new TimedLeaseStorePostProcessor(metrics::getIfAvailable);
	}

}
