package io.github.leaderelection.autoconfigure;

import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.metrics.LeaderElectionMetrics;
import io.github.leaderelection.metrics.TimedLeaseStorePostProcessor;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * {@link EnableAutoConfiguration Auto-configuration} for the Micrometer metrics of leader
 * election, when the application has a {@link MeterRegistry}: the gauges and counters of
 * {@link LeaderElectionMetrics}, and the timing of every lease store bean's requests.
 */
@AutoConfiguration(after = LeaderElectionAutoConfiguration.class,
		afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration" })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({ MeterRegistry.class, LeaderElectionRegistry.class })
public final class LeaderElectionMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LeaderElectionMetrics leaderElectionMetrics(LeaderElectionRegistry registry) {
		return new LeaderElectionMetrics(registry);
	}

	@Bean
	static TimedLeaseStorePostProcessor timedLeaseStorePostProcessor(ObjectProvider<LeaderElectionMetrics> metrics) {
		return new TimedLeaseStorePostProcessor(metrics::getIfAvailable);
	}

}
