package io.github.leaderelection.autoconfigure;

import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.actuate.LeaderElectionHealthIndicator;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * {@link EnableAutoConfiguration Auto-configuration} for the {@code leaderElection}
 * health indicator, switched off by
 * {@code management.health.leader-election.enabled=false}.
 */
@AutoConfiguration(after = LeaderElectionAutoConfiguration.class)
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnBean(LeaderElectionRegistry.class)
@ConditionalOnEnabledHealthIndicator("leader-election")
public final class LeaderElectionHealthContributorAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "leaderElectionHealthIndicator")
	LeaderElectionHealthIndicator leaderElectionHealthIndicator(LeaderElectionRegistry registry) {
		return new LeaderElectionHealthIndicator(registry);
	}

}
