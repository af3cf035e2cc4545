package io.github.leaderelection.autoconfigure;

import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.LeaseStore;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Elects within this JVM, when {@code leader-election.backend=in-memory}: every candidate
 * of the process shares one store, so there is always one leader per group. For tests and
 * local runs.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnMissingBean({ LeaseStore.class, LeaderElectionRegistry.class })
@ConditionalOnLeaderElectionBackend(LeaderElectionBackend.IN_MEMORY)
class InMemoryBackendConfiguration {

	@Bean
	InMemoryLeaseStore leaderElectionLeaseStore() {
		return new InMemoryLeaseStore();
	}

}
