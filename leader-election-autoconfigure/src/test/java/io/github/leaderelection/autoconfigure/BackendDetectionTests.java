package io.github.leaderelection.autoconfigure;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link BackendDetection}.
 */
class BackendDetectionTests {

	private final BackendDetection.Context context = new BackendDetection.Context(new DefaultListableBeanFactory(),
			new MockEnvironment(), getClass().getClassLoader());

	@Test
	void detectsNothingWithoutDataSource() {
		assertThat(BackendDetection.standard().fitting(this.context)).isEmpty();
	}

	@Test
	void namesEveryFittingBackendWhenSeveralFit() {
		BackendDetection detection = new BackendDetection(List.of(
				new BackendDetection.Candidate(LeaderElectionBackend.JDBC, "a DataSource bean", "add one", "jdbc",
						(classLoader) -> true, (context) -> true),
				new BackendDetection.Candidate(LeaderElectionBackend.REDIS, "a RedisConnectionFactory bean", "add one",
						"redis", (classLoader) -> true, (context) -> true)));
		LeaderElectionConfigurationException failure = detection.noStore(null, this.context);
		assertThat(failure.getMessage()).isEqualTo("Several leader election backends fit the application and "
				+ "leader-election.backend is not set: jdbc (detected by a DataSource bean), redis (detected by a "
				+ "RedisConnectionFactory bean).");
		assertThat(failure.action()).isEqualTo("Set leader-election.backend to one of: jdbc, redis.");
	}

	@Test
	void tellsHowToProvideEachDetectableBackendWhenNoneFits() {
		LeaderElectionConfigurationException failure = BackendDetection.standard().noStore(null, this.context);
		assertThat(failure.getMessage()).contains("jdbc needs a DataSource bean");
		assertThat(failure.action()).startsWith("To elect through jdbc, add spring-boot-starter-jdbc");
	}

	@Test
	void namesTheBackendsOnTheClassPathAndWhatTheOthersNeed() {
		assertThat(BackendDetection.standard().onClassPath(getClass().getClassLoader()))
			.isEqualTo("jdbc, redis, zookeeper, etcd, in-memory");
		FilteredClassLoader withoutRedisAndCurator = new FilteredClassLoader("org.springframework.data.redis.",
				"org.apache.curator.");
		assertThat(BackendDetection.standard().onClassPath(withoutRedisAndCurator)).isEqualTo(
				"jdbc, etcd, in-memory; redis needs spring-boot-starter-data-redis, zookeeper needs org.apache.curator:curator-framework");
		FilteredClassLoader withoutRedisCuratorAndJetcd = new FilteredClassLoader("org.springframework.data.redis.",
				"org.apache.curator.", "io.etcd.jetcd.");
		assertThat(BackendDetection.standard().onClassPath(withoutRedisCuratorAndJetcd))
			.isEqualTo("jdbc, in-memory; redis needs spring-boot-starter-data-redis, zookeeper needs "
					+ "org.apache.curator:curator-framework, etcd needs io.etcd:jetcd-core");
	}

	@Test
	void listsAvailableBackends() {
		assertThat(BackendDetection.available()).isEqualTo("jdbc, redis, zookeeper, etcd, in-memory");
	}

}
