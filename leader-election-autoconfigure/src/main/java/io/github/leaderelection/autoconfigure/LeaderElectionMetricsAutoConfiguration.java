package io.github.leaderelection.autoconfigure;

import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.metrics.LeaderElectionMetricsConfiguration;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Import;

/**
 * {@link EnableAutoConfiguration Auto-configuration} for the Micrometer metrics of leader
 * election, when the application has a {@link MeterRegistry}: who leads each group, the
 * terms, the transitions of this instance, and the timing of every lease store bean's
 * requests.
 */
@AutoConfiguration(after = LeaderElectionAutoConfiguration.class,
		afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration" })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({ MeterRegistry.class, LeaderElectionRegistry.class })
@Import(LeaderElectionMetricsConfiguration.class)
public final class LeaderElectionMetricsAutoConfiguration {

}
