package io.github.leaderelection.autoconfigure;

import java.io.InputStream;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.jayway.jsonpath.JsonPath;
import io.github.leaderelection.ElectionTiming;
import org.junit.jupiter.api.Test;

import org.springframework.core.io.ClassPathResource;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link LeaderElectionProperties} and {@link LeaderElectionJdbcProperties},
 * and for the metadata generated from them.
 */
class LeaderElectionPropertiesTests {

	private final LeaderElectionProperties properties = new LeaderElectionProperties();

	@Test
	void defaultTimingIsTheEnginesDefault() {
		assertThat(new ElectionTiming(this.properties.getLeaseDuration(), this.properties.getRenewDeadline(),
				this.properties.getRetryPeriod()))
			.isEqualTo(ElectionTiming.DEFAULTS);
	}

	@Test
	void groupDefaultsToApplicationName() {
		assertThat(
				this.properties.determineGroup(new MockEnvironment().withProperty("spring.application.name", "orders")))
			.isEqualTo("orders");
	}

	@Test
	void groupDefaultsToDefaultWithoutApplicationName() {
		assertThat(this.properties.determineGroup(new MockEnvironment())).isEqualTo("default");
		assertThat(this.properties.determineGroup(new MockEnvironment().withProperty("spring.application.name", " ")))
			.isEqualTo("default");
	}

	@Test
	void configuredGroupWinsOverApplicationName() {
		this.properties.setGroup("billing");
		assertThat(
				this.properties.determineGroup(new MockEnvironment().withProperty("spring.application.name", "orders")))
			.isEqualTo("billing");
	}

	@Test
	void metadataDescribesEveryProperty() throws Exception {
		try (InputStream metadata = new ClassPathResource("META-INF/spring-configuration-metadata.json")
			.getInputStream()) {
			List<Map<String, Object>> described = JsonPath.parse(metadata).read("$.properties[*]");
			Set<String> names = new HashSet<>();
			for (Map<String, Object> property : described) {
				names.add((String) property.get("name"));
				assertThat((String) property.get("description")).as("description of %s", property.get("name"))
					.isNotBlank()
					.doesNotStartWith("The ")
					.doesNotStartWith("A ");
			}
			assertThat(names).containsExactlyInAnyOrder("leader-election.lifecycle.beans",
					"management.health.leader-election.enabled", "management.endpoint.leaderelection.access",
					"management.endpoint.leaderelection.cache.time-to-live", "leader-election.enabled",
					"leader-election.backend", "leader-election.group", "leader-election.candidate-id",
					"leader-election.lease-duration", "leader-election.renew-deadline", "leader-election.retry-period",
					"leader-election.release-on-shutdown", "leader-election.watch-before-leading",
					"leader-election.shutdown-timeout", "leader-election.balance.enabled",
					"leader-election.balance.weight", "leader-election.balance.preferred-leaders",
					"leader-election.partitions", "leader-election.endpoint.max-actions-per-group",
					"leader-election.endpoint.action-window", "leader-election.endpoint.max-request-size",
					"leader-election.jobs.run-records", "leader-election.jobs.missed-ticks",
					"leader-election.jobs.missed-tick-max-age", "leader-election.jdbc.table-name",
					"leader-election.jdbc.initialize-schema", "leader-election.jdbc.notifications",
					"leader-election.jdbc.fail-fast", "leader-election.jdbc.allow-in-memory-database",
					"leader-election.redis.key-prefix", "leader-election.redis.replica-acks",
					"leader-election.redis.replica-ack-timeout", "leader-election.zookeeper.connect-string",
					"leader-election.zookeeper.session-timeout", "leader-election.zookeeper.connection-timeout",
					"leader-election.zookeeper.base-path", "leader-election.zookeeper.auth",
					"leader-election.zookeeper.acl", "leader-election.zookeeper.keep-leading-while-suspended",
					"leader-election.etcd.endpoints", "leader-election.etcd.namespace", "leader-election.etcd.user",
					"leader-election.etcd.password", "leader-election.etcd.ssl-bundle",
					"leader-election.etcd.connect-timeout");
		}
	}

	@Test
	void metadataHintsEnumeratedValues() throws Exception {
		try (InputStream metadata = new ClassPathResource("META-INF/spring-configuration-metadata.json")
			.getInputStream()) {
			Object document = com.jayway.jsonpath.Configuration.defaultConfiguration()
				.jsonProvider()
				.parse(metadata, "UTF-8");
			List<String> backends = JsonPath.read(document,
					"$.hints[?(@.name == 'leader-election.backend')].values[*].value");
			assertThat(backends).containsExactly("jdbc", "in-memory", "redis", "zookeeper", "etcd");
			List<String> modes = JsonPath.read(document,
					"$.hints[?(@.name == 'leader-election.jdbc.initialize-schema')].values[*].value");
			assertThat(modes).containsExactly("embedded", "always", "never");
		}
	}

}
