package io.github.leaderelection.autoconfigure;

import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.test.LeaderElectionTestSupport;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * {@link EnableAutoConfiguration Auto-configuration} for
 * {@link LeaderElectionTestSupport}, in tests only: when spring-test and JUnit Jupiter
 * are on the class path.
 */
@AutoConfiguration(after = LeaderElectionAutoConfiguration.class)
@ConditionalOnClass(name = { "org.springframework.test.context.junit.jupiter.SpringExtension",
		"org.junit.jupiter.api.extension.Extension" })
@ConditionalOnBean(LeaderElectionRegistry.class)
public final class LeaderElectionTestSupportAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LeaderElectionTestSupport leaderElectionTestSupport(LeaderElectionRegistry registry,
			ObjectProvider<LeaderElectionProperties> properties, Environment environment) {
		return new LeaderElectionTestSupport(registry,
				properties.getIfAvailable(LeaderElectionProperties::new).determineGroup(environment));
	}

}
