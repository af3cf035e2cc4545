package io.github.leaderelection.autoconfigure;

import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.metrics.LeaderElectionObservationConfiguration;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Import;

/**
 * {@link EnableAutoConfiguration Auto-configuration} for Micrometer observations of
 * leader election: every store call and every transition of this instance, so that traces
 * show them next to the application's own work. The meters of
 * {@link LeaderElectionMetricsAutoConfiguration} stay as they are.
 */
@AutoConfiguration(after = LeaderElectionAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean(LeaderElectionRegistry.class)
@Import(LeaderElectionObservationConfiguration.class)
public final class LeaderElectionObservationAutoConfiguration {

}
