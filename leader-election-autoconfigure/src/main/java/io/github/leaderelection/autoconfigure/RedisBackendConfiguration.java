package io.github.leaderelection.autoconfigure;

import java.util.Arrays;

import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.redis.RedisLeaseStore;
import io.github.leaderelection.spi.LeaseStore;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Elects through the application's Redis, with the {@link RedisConnectionFactory} it
 * already has (standalone, Sentinel or Cluster), which must be Lettuce's.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = { "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory",
		"io.lettuce.core.RedisClient" })
@ConditionalOnMissingBean({ LeaseStore.class, LeaderElectionRegistry.class })
@ConditionalOnLeaderElectionBackend(LeaderElectionBackend.REDIS)
@EnableConfigurationProperties(LeaderElectionRedisProperties.class)
class RedisBackendConfiguration {

	private static final String KEY_PREFIX_PROPERTY = "leader-election.redis.key-prefix";

	@Bean
	RedisLeaseStore leaderElectionLeaseStore(LeaderElectionRedisProperties properties,
			LeaderElectionProperties election, ObjectProvider<RedisConnectionFactory> connectionFactory,
			ListableBeanFactory beanFactory) {
		RedisConnectionFactory selected = connectionFactory.getIfUnique();
		if (selected == null) {
			throw new LeaderElectionConfigurationException(
					"Leader election uses the redis backend but cannot choose among the RedisConnectionFactory beans "
							+ Arrays
								.toString(beanFactory.getBeanNamesForType(RedisConnectionFactory.class, true, false))
							+ ": none is marked @Primary.",
					"Mark the RedisConnectionFactory to elect through with @Primary, or set "
							+ BackendDetection.BACKEND_PROPERTY + " to another backend.");
		}
		if (!(selected instanceof LettuceConnectionFactory)) {
			throw new LeaderElectionConfigurationException(
					"Leader election through Redis needs Lettuce, but the RedisConnectionFactory is a "
							+ selected.getClass().getName() + ".",
					"Use Lettuce, the default client of spring-boot-starter-data-redis (remove Jedis, or set "
							+ "spring.data.redis.client-type=lettuce), or set " + BackendDetection.BACKEND_PROPERTY
							+ " to another backend.");
		}
		if (properties.getReplicaAcks() < 0) {
			throw new LeaderElectionConfigurationException(
					"Invalid value '" + properties.getReplicaAcks() + "' for leader-election.redis.replica-acks: it "
							+ "must not be negative.",
					"Set leader-election.redis.replica-acks to the number of replicas that must acknowledge each "
							+ "acquire and renewal, or to 0 (the default) not to wait for replicas.");
		}
		if (properties.getReplicaAcks() > 0 && properties.getReplicaAckTimeout().toMillis() < 1) {
			throw new LeaderElectionConfigurationException(
					"Invalid value '" + properties.getReplicaAckTimeout()
							+ "' for leader-election.redis.replica-ack-timeout: it must be at least 1ms when "
							+ "leader-election.redis.replica-acks is set.",
					"Set leader-election.redis.replica-ack-timeout to a duration such as 500ms, shorter than "
							+ "leader-election.retry-period.");
		}
		if (properties.getReplicaAcks() > 0
				&& properties.getReplicaAckTimeout().compareTo(election.getRetryPeriod()) >= 0) {
			// The wait happens within the store call, which times out after a retry
			// period.
			throw new LeaderElectionConfigurationException(
					"Invalid value '" + DurationBounds.print(properties.getReplicaAckTimeout())
							+ "' for leader-election.redis.replica-ack-timeout: it must be less than "
							+ "leader-election.retry-period (" + DurationBounds.print(election.getRetryPeriod())
							+ "), the timeout of the store call that waits.",
					"Set leader-election.redis.replica-ack-timeout to a duration such as 500ms, shorter than "
							+ "leader-election.retry-period.");
		}
		try {
			return new RedisLeaseStore(selected, properties.getKeyPrefix(), properties.getReplicaAcks(),
					properties.getReplicaAckTimeout());
		}
		catch (IllegalArgumentException ex) {
			throw new LeaderElectionConfigurationException(
					"Invalid value '" + properties.getKeyPrefix() + "' for " + KEY_PREFIX_PROPERTY + ": "
							+ ex.getMessage(),
					"Set " + KEY_PREFIX_PROPERTY + " to letters, digits and '_', '.', ':', '-' (no '--'), starting "
							+ "with a letter, such as app-1:elections:, or remove it to use leader-election:.",
					ex);
		}
	}

}
