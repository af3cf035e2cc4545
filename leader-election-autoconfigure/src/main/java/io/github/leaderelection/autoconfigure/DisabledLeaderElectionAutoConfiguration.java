package io.github.leaderelection.autoconfigure;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeadershipContext;
import io.github.leaderelection.engine.LeaderElectionEngine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;

/**
 * {@link EnableAutoConfiguration Auto-configuration} for an application whose leader
 * election is switched off with {@code leader-election.enabled=false}: no store, no
 * election, and this instance leads every group, unelected, in term 0.
 * {@code @OnlyOnLeader} methods run, with a {@link LeadershipContext}, and the
 * {@link LeaderElection} bean answers as on a leader, so that code written for an
 * election works unchanged on a single instance.
 */
@AutoConfiguration
@ConditionalOnBooleanProperty(name = "leader-election.enabled", havingValue = false)
@EnableConfigurationProperties(LeaderElectionProperties.class)
@Import({ SpringBootVersionCheck.class, LeaderElectionAutoConfiguration.OnlyOnLeaderConfiguration.class })
public final class DisabledLeaderElectionAutoConfiguration {

	private static final Logger logger = LoggerFactory.getLogger(DisabledLeaderElectionAutoConfiguration.class);

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	UnelectedLeaderElections unelectedLeaderElections(LeaderElectionProperties properties) {
		String candidateId = properties.getCandidateId();
		// Loud on purpose: a second instance started with this setting runs the same jobs
		// at the same time.
		logger.warn("Leader election is disabled (leader-election.enabled=false): this instance leads every group "
				+ "without an election, in term {}, and runs every @OnlyOnLeader method. Run a single instance "
				+ "only, or set leader-election.enabled=true.", UnelectedLeaderElections.TERM);
		return new UnelectedLeaderElections(
				(candidateId != null) ? candidateId : LeaderElectionEngine.defaultCandidateId());
	}

	@Bean
	@ConditionalOnMissingBean(LeaderElection.class)
	LeaderElection leaderElection(UnelectedLeaderElections elections, LeaderElectionProperties properties,
			Environment environment) {
		return LeaderElectionAutoConfiguration.joinApplicationGroup(elections.registry(), properties, environment);
	}

}
