package io.github.leaderelection.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;

import io.github.leaderelection.testing.ApplicationReady;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.jdbc.JdbcLeaseStore;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.redis.RedisLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static io.github.leaderelection.autoconfigure.LeaderElectionAutoConfigurationTests.analyze;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link RedisBackendConfiguration}. Only
 * {@link #electsThroughRedisWhenTheApplicationIsReady()} reaches Redis: the one named by
 * {@code LEADER_ELECTION_TEST_REDIS_URL}, else the server on 127.0.0.1:6379.
 */
class RedisBackendConfigurationTests {

	private static final String REDIS_URL = System.getenv()
		.getOrDefault("LEADER_ELECTION_TEST_REDIS_URL", "redis://127.0.0.1:6379");

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(DataRedisAutoConfiguration.class, LeaderElectionAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.url=" + REDIS_URL);

	@Test
	void electsThroughApplicationRedisWhenDetected() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(RedisLeaseStore.class);
			assertThat(context.getBean(LeaderElectionEngine.class).store())
				.isSameAs(context.getBean(RedisLeaseStore.class));
		});
	}

	@Test
	void electsThroughRedisWhenSelected() {
		this.contextRunner.withPropertyValues("leader-election.backend=redis")
			.run((context) -> assertThat(context).hasSingleBean(RedisLeaseStore.class));
	}

	@Test
	void electsThroughRedisWhenTheApplicationIsReady() {
		String prefix = "le-autoconfig-" + UUID.randomUUID().toString().substring(0, 8) + ":";
		this.contextRunner
			.withPropertyValues("leader-election.redis.key-prefix=" + prefix, "leader-election.group=orders",
					"leader-election.retry-period=200ms", "leader-election.renew-deadline=1s",
					"leader-election.lease-duration=2s")
			.run((context) -> {
				ApplicationReady.publish(context);
				await().atMost(Duration.ofSeconds(20)).until(context.getBean(LeaderElection.class)::isLeader);
				context.close(); // releases the lease, before the connection factory
									// closes
				LettuceConnectionFactory factory = new LettuceConnectionFactory(
						LettuceConnectionFactory.createRedisConfiguration(REDIS_URL));
				factory.afterPropertiesSet();
				factory.start();
				try (RedisConnection connection = factory.getConnection()) {
					byte[] record = (prefix + "{orders}:term").getBytes(StandardCharsets.UTF_8);
					assertThat(connection.hashCommands().hGet(record, "holder".getBytes(StandardCharsets.UTF_8)))
						.isEmpty();
					connection.keyCommands().del(record);
				}
				finally {
					factory.destroy();
				}
			});
	}

	@Test
	void failsAskingToChooseWhenADataSourceFitsToo() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class))
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).startsWith("Several leader election backends fit the application")
					.contains("jdbc (detected by a DataSource bean")
					.contains("redis (detected by a RedisConnectionFactory bean");
				assertThat(analysis.getAction()).isEqualTo("Set leader-election.backend to one of: jdbc, redis.");
			});
	}

	@Test
	void electsThroughTheSelectedBackendWhenADataSourceFitsToo() {
		ApplicationContextRunner both = this.contextRunner
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class));
		both.withPropertyValues("leader-election.backend=redis")
			.run((context) -> assertThat(context).hasSingleBean(RedisLeaseStore.class)
				.doesNotHaveBean(JdbcLeaseStore.class));
		both.withPropertyValues("leader-election.backend=jdbc", "leader-election.jdbc.allow-in-memory-database=true")
			.run((context) -> assertThat(context).hasSingleBean(JdbcLeaseStore.class)
				.doesNotHaveBean(RedisLeaseStore.class));
	}

	@Test
	void backsOffWhenUserDefinesLeaseStore() {
		this.contextRunner.withBean("userLeaseStore", InMemoryLeaseStore.class, InMemoryLeaseStore::new)
			.run((context) -> assertThat(context).hasSingleBean(LeaseStore.class)
				.doesNotHaveBean(RedisLeaseStore.class));
	}

	@Test
	void failsWithClearMessageWhenRedisIsSelectedWithoutConnectionFactory() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class))
			.withPropertyValues("leader-election.backend=redis")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).isEqualTo("leader-election.backend is 'redis', but the "
						+ "application lacks what that backend needs: a RedisConnectionFactory bean, with Lettuce on "
						+ "the class path.");
				assertThat(analysis.getAction()).contains("add spring-boot-starter-data-redis");
			});
	}

	@Test
	void failsWithClearMessageWhenKeyPrefixIsUnsafe() {
		this.contextRunner.withPropertyValues("leader-election.redis.key-prefix=app{1}").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription())
				.startsWith("Invalid value 'app{1}' for leader-election.redis.key-prefix");
			assertThat(analysis.getAction()).startsWith("Set leader-election.redis.key-prefix to letters, digits");
		});
	}

	@Test
	void failsWithClearMessageWhenReplicaAcknowledgementsAreNegative() {
		this.contextRunner.withPropertyValues("leader-election.redis.replica-acks=-1")
			.run((context) -> assertThat(analyze(context).getDescription())
				.startsWith("Invalid value '-1' for leader-election.redis.replica-acks"));
	}

	@Test
	void failsWithClearMessageWhenReplicaAcknowledgementTimeoutIsZero() {
		this.contextRunner
			.withPropertyValues("leader-election.redis.replica-acks=1", "leader-election.redis.replica-ack-timeout=0s")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("for leader-election.redis.replica-ack-timeout"));
	}

	@Test
	void failsWithClearMessageWhenReplicaAcknowledgementTimeoutOutlastsTheStoreCall() {
		this.contextRunner
			.withPropertyValues("leader-election.redis.replica-acks=1", "leader-election.redis.replica-ack-timeout=2s")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).isEqualTo("Invalid value '2s' for "
						+ "leader-election.redis.replica-ack-timeout: it must be less than leader-election.retry-period "
						+ "(2s), the timeout of the store call that waits.");
				assertThat(analysis.getAction()).contains("shorter than leader-election.retry-period");
			});
	}

}
