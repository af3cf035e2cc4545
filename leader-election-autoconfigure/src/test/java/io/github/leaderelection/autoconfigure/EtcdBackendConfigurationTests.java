package io.github.leaderelection.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.autoconfigure.EtcdBackendConfiguration.LeaderElectionEtcdClient;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.etcd.EtcdLeaseStore;
import io.github.leaderelection.testing.ApplicationReady;
import io.github.leaderelection.testing.TestEtcd;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static io.github.leaderelection.autoconfigure.LeaderElectionAutoConfigurationTests.analyze;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link EtcdBackendConfiguration}, on the test etcd (see {@link TestEtcd}).
 */
@ExtendWith(OutputCaptureExtension.class)
class EtcdBackendConfigurationTests {

	private static TestEtcd server;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class));

	@BeforeAll
	static void startServer() throws Exception {
		server = TestEtcd.start(Path.of("target/etcd/autoconfigure"));
	}

	@AfterAll
	static void stopServer() throws Exception {
		if (server != null) {
			server.close();
		}
	}

	@Test
	void electsThroughClientOfItsOwnWhenEndpointsAreSet() {
		this.contextRunner.withPropertyValues(endpoints(), "leader-election.retry-period=500ms").run((context) -> {
			assertThat(context).hasSingleBean(EtcdLeaseStore.class)
				.hasSingleBean(LeaderElectionEtcdClient.class)
				.doesNotHaveBean(Client.class);
			assertThat(context.getBean(LeaderElectionEngine.class).store())
				.isSameAs(context.getBean(EtcdLeaseStore.class));
			ApplicationReady.publish(context);
			LeaderElection election = context.getBean(LeaderElection.class);
			await().atMost(Duration.ofSeconds(20)).until(election::isLeader);
		});
	}

	@Test
	void electsThroughApplicationsClientWhenDetected() {
		this.contextRunner
			.withBean(Client.class, () -> Client.builder().endpoints(server.endpoint()).build(),
					(definition) -> definition.setDestroyMethodName("close"))
			.withPropertyValues("leader-election.etcd.namespace=detected", "leader-election.group=detected-group")
			.run((context) -> {
				assertThat(context).hasSingleBean(EtcdLeaseStore.class).doesNotHaveBean(LeaderElectionEtcdClient.class);
				ApplicationReady.publish(context);
				await().atMost(Duration.ofSeconds(20)).until(context.getBean(LeaderElection.class)::isLeader);
				Client client = context.getBean(Client.class);
				ByteSequence record = ByteSequence.from("detected/groups/detected-group/record",
						StandardCharsets.UTF_8);
				assertThat(client.getKVClient().get(record).get().getCount()).isOne();
			});
	}

	@Test
	void failsWhenSeveralBackendsFitAndNoneIsSelected() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class))
			.withPropertyValues(endpoints())
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).contains("Several leader election backends fit the application")
					.contains("etcd (detected by a jetcd Client bean or the leader-election.etcd.endpoints property");
				assertThat(analysis.getAction()).contains("Set leader-election.backend to one of: jdbc, etcd");
			});
	}

	@Test
	void electsThroughEtcdWhenSelectedAmongSeveral() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class))
			.withPropertyValues(endpoints(), "leader-election.backend=etcd")
			.run((context) -> assertThat(context).hasSingleBean(EtcdLeaseStore.class));
	}

	@Test
	void failsWithClearMessageWhenEtcdIsSelectedWithoutClient() {
		this.contextRunner.withPropertyValues("leader-election.backend=etcd").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).contains("leader-election.backend is 'etcd'")
				.contains("a jetcd Client bean or the leader-election.etcd.endpoints property");
			assertThat(analysis.getAction()).contains("set leader-election.etcd.endpoints");
		});
	}

	@Test
	void refusesAnEndpointThatIsNotAClientUrl() {
		this.contextRunner.withPropertyValues("leader-election.etcd.endpoints=etcd1:2379").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription())
				.startsWith("Invalid endpoint 'etcd1:2379' in leader-election.etcd.endpoints");
			assertThat(analysis.getAction()).contains("http://etcd1:2379");
		});
	}

	@Test
	void refusesAnUnsafeNamespace() {
		this.contextRunner.withPropertyValues(endpoints(), "leader-election.etcd.namespace=a b").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).startsWith("Invalid value 'a b' for leader-election.etcd.namespace")
				.contains("must match");
		});
	}

	@Test
	void refusesAUserWithoutPassword() {
		this.contextRunner.withPropertyValues(endpoints(), "leader-election.etcd.user=elector").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription())
				.isEqualTo("leader-election.etcd.user is set but leader-election.etcd.password is not.");
		});
	}

	@Test
	void warnsWhenCredentialsGoOverUnencryptedEndpoints(CapturedOutput output) {
		this.contextRunner
			.withPropertyValues(endpoints(), "leader-election.etcd.user=elector",
					"leader-election.etcd.password=secret")
			.run((context) -> assertThat(context).hasSingleBean(LeaderElectionEtcdClient.class));
		assertThat(output).contains("WARN")
			.contains("leader-election.etcd.user and leader-election.etcd.password are set, but "
					+ "leader-election.etcd.endpoints lists endpoints over unencrypted http (" + server.endpoint()
					+ ")")
			.contains("Use https:// endpoints in leader-election.etcd.endpoints")
			.doesNotContain("secret");
	}

	@Test
	void doesNotWarnOfCredentialsWithoutThem(CapturedOutput output) {
		this.contextRunner.withPropertyValues(endpoints())
			.run((context) -> assertThat(context).hasSingleBean(LeaderElectionEtcdClient.class));
		assertThat(output).doesNotContain("unencrypted http");
	}

	@Test
	void failsWithClearMessageWhenConnectTimeoutIsOutOfRange() {
		this.contextRunner.withPropertyValues(endpoints(), "leader-election.etcd.connect-timeout=30d")
			.run((context) -> assertThat(analyze(context).getDescription())
				.isEqualTo("Invalid value '30d' for leader-election.etcd.connect-timeout: it must be at most 1h"));
	}

	@Test
	void refusesAnSslBundleThatDoesNotExist() {
		this.contextRunner.withPropertyValues(endpoints(), "leader-election.etcd.ssl-bundle=etcd").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription())
				.isEqualTo("leader-election.etcd.ssl-bundle is 'etcd', but there is no SSL bundle of that name.");
		});
	}

	private static String endpoints() {
		return "leader-election.etcd.endpoints=" + server.endpoint();
	}

}
