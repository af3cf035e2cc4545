package io.github.leaderelection.test;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration for {@link LeaderElectionTestSupport}, imported by
 * {@link AutoConfigureLeaderElectionTestSupport} on a test class only: it is not listed
 * among the application's auto-configurations, so nothing on the class path turns it on.
 */
@AutoConfiguration(afterName = "io.github.leaderelection.autoconfigure.LeaderElectionAutoConfiguration")
@ConditionalOnBean({ LeaderElectionRegistry.class, LeaderElection.class })
public final class LeaderElectionTestSupportAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LeaderElectionTestSupport leaderElectionTestSupport(LeaderElectionRegistry registry,
			ObjectProvider<LeaderElection> elections) {
		// The application's group is the group of its LeaderElection bean (one unless the
		// application defines more).
		LeaderElection application = elections.getIfUnique(() -> elections.orderedStream().findFirst().orElseThrow());
		return new LeaderElectionTestSupport(registry, application.group());
	}

}
