package io.github.leaderelection.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import io.github.leaderelection.testing.ApplicationReady;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.autoconfigure.ZookeeperBackendConfiguration.LeaderElectionCuratorClient;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.zookeeper.ZookeeperLeaseStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.CloseableUtils;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
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
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link ZookeeperBackendConfiguration}, on an in-process ZooKeeper server
 * whose sessions last at most 20 seconds.
 */
@ExtendWith(OutputCaptureExtension.class)
class ZookeeperBackendConfigurationTests {

	private static TestingServer server;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class));

	@BeforeAll
	static void startServer() throws Exception {
		server = new TestingServer();
	}

	@AfterAll
	static void stopServer() {
		CloseableUtils.closeQuietly(server);
	}

	@Test
	void failsWithClearMessageWhenLeaseDurationIsOutOfRange() {
		// The session timeout defaults to the lease duration, which the client takes in
		// int milliseconds.
		this.contextRunner.withPropertyValues(connectString(), "leader-election.lease-duration=300000d")
			.run((context) -> assertThat(analyze(context).getDescription())
				.isEqualTo("Invalid value '300000d' for leader-election.lease-duration: it must be at most 1d"));
	}

	@Test
	void failsWithClearMessageWhenTimeoutsAreOutOfRange() {
		this.contextRunner.withPropertyValues(connectString(), "leader-election.zookeeper.session-timeout=30d")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).isEqualTo(
						"Invalid value '30d' for leader-election.zookeeper.session-timeout: it must be at most 1d");
				assertThat(analysis.getAction()).startsWith("Set leader-election.zookeeper.session-timeout to");
			});
		this.contextRunner.withPropertyValues(connectString(), "leader-election.zookeeper.connection-timeout=0s")
			.run((context) -> assertThat(analyze(context).getDescription())
				.isEqualTo("Invalid value '0s' for leader-election.zookeeper.connection-timeout: it must be positive"));
	}

	@Test
	void electsThroughClientOfItsOwnWhenConnectStringIsSet() {
		this.contextRunner.withPropertyValues(connectString()).run((context) -> {
			assertThat(context).hasSingleBean(ZookeeperLeaseStore.class)
				.hasSingleBean(LeaderElectionCuratorClient.class)
				.doesNotHaveBean(CuratorFramework.class);
			assertThat(context.getBean(LeaderElectionEngine.class).store())
				.isSameAs(context.getBean(ZookeeperLeaseStore.class));
			ApplicationReady.publish(context);
			LeaderElection election = context.getBean(LeaderElection.class);
			await().atMost(Duration.ofSeconds(20)).until(election::isLeader);
		});
	}

	@Test
	void closesItsOwnClientWithTheContext() {
		CuratorFramework[] client = new CuratorFramework[1];
		this.contextRunner.withPropertyValues(connectString())
			.run((context) -> client[0] = context.getBean(LeaderElectionCuratorClient.class).client());
		assertThat(client[0].getState()).isEqualTo(CuratorFrameworkState.STOPPED);
	}

	@Test
	void electsThroughApplicationsCuratorFrameworkWhenDetected() {
		this.contextRunner
			.withBean(CuratorFramework.class, ZookeeperBackendConfigurationTests::startedClient,
					(definition) -> definition.setDestroyMethodName("close"))
			.withPropertyValues("leader-election.zookeeper.base-path=/detected")
			.run((context) -> {
				assertThat(context).hasSingleBean(ZookeeperLeaseStore.class)
					.doesNotHaveBean(LeaderElectionCuratorClient.class);
				ZookeeperLeaseStore store = context.getBean(ZookeeperLeaseStore.class);
				awaitLease(store);
				assertThat(context.getBean(CuratorFramework.class).checkExists().forPath("/detected/orders"))
					.isNotNull();
			});
	}

	@Test
	void failsWhenSeveralBackendsFitAndNoneIsSelected() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class))
			.withPropertyValues(connectString())
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).contains("Several leader election backends fit the application")
					.contains("zookeeper (detected by a CuratorFramework bean or the "
							+ "leader-election.zookeeper.connect-string property");
				assertThat(analysis.getAction()).contains("Set leader-election.backend to one of: jdbc, zookeeper");
			});
	}

	@Test
	void electsThroughZookeeperWhenSelectedAmongSeveral() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class))
			.withPropertyValues(connectString(), "leader-election.backend=zookeeper")
			.run((context) -> assertThat(context).hasSingleBean(ZookeeperLeaseStore.class));
	}

	@Test
	void failsWithClearMessageWhenZookeeperIsSelectedWithoutClient() {
		this.contextRunner.withPropertyValues("leader-election.backend=zookeeper").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).contains("leader-election.backend is 'zookeeper'")
				.contains("a CuratorFramework bean or the leader-election.zookeeper.connect-string property");
			assertThat(analysis.getAction()).contains("set leader-election.zookeeper.connect-string");
		});
	}

	@Test
	void backsOffWhenUserDefinesLeaseStore() {
		this.contextRunner.withPropertyValues(connectString())
			.withBean("userLeaseStore", InMemoryLeaseStore.class, InMemoryLeaseStore::new)
			.run((context) -> assertThat(context).hasSingleBean(LeaseStore.class)
				.doesNotHaveBean(ZookeeperLeaseStore.class)
				.doesNotHaveBean(LeaderElectionCuratorClient.class));
	}

	@Test
	void failsWithClearMessageWhenSessionTimeoutIsShorterThanLease() {
		this.contextRunner.withPropertyValues(connectString(), "leader-election.zookeeper.session-timeout=5s")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).contains("leader-election.zookeeper.session-timeout (5s) is "
						+ "shorter than leader-election.lease-duration (15s)");
				assertThat(analysis.getAction()).contains("at least leader-election.lease-duration");
			});
	}

	@Test
	void failsWithClearMessageWhenServersGrantShorterSessionThanLease() {
		this.contextRunner
			.withPropertyValues(connectString(), "leader-election.lease-duration=25s",
					"leader-election.zookeeper.session-timeout=60s")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).contains("granted a session timeout of 20000 ms, shorter than "
						+ "leader-election.lease-duration (25s)");
				assertThat(analysis.getAction()).contains("maxSessionTimeout");
			});
	}

	@Test
	void failsWithClearMessageForInvalidBasePath() {
		this.contextRunner.withPropertyValues(connectString(), "leader-election.zookeeper.base-path=leader election")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription())
					.startsWith("Invalid value 'leader election' for leader-election.zookeeper.base-path")
					.contains("must match ^");
				assertThat(analysis.getAction()).contains("/apps/orders/leader-election");
			});
	}

	@Test
	void failsWithClearMessageWhenCreatorAclHasNoAuth() {
		this.contextRunner.withPropertyValues(connectString(), "leader-election.zookeeper.acl=creator")
			.run((context) -> assertThat(analyze(context).getAction())
				.contains("Set leader-election.zookeeper.auth to the 'user:password'"));
	}

	@Test
	void protectsNodesWithDigestAuthAndCreatorAcl() {
		this.contextRunner
			.withPropertyValues(connectString(), "leader-election.zookeeper.base-path=/guarded",
					"leader-election.zookeeper.auth=app:secret", "leader-election.zookeeper.acl=creator")
			.run((context) -> {
				awaitLease(context.getBean(ZookeeperLeaseStore.class));
				CuratorFramework insider = CuratorFrameworkFactory.builder()
					.connectString(server.getConnectString())
					.retryPolicy(new RetryOneTime(100))
					.authorization("digest", "app:secret".getBytes(StandardCharsets.UTF_8))
					.build();
				CuratorFramework stranger = startedClient();
				try {
					insider.start();
					List<ACL> acl = insider.getACL().forPath("/guarded/orders");
					assertThat(acl).singleElement()
						.satisfies((entry) -> assertThat(entry.getId().getScheme()).isEqualTo("digest"));
					assertThatExceptionOfType(KeeperException.NoAuthException.class)
						.isThrownBy(() -> stranger.getData().forPath("/guarded/orders"));
				}
				finally {
					insider.close();
					stranger.close();
				}
			});
	}

	@Test
	void restrictsNodesToAuthenticatedIdentityWhenAuthIsSet(CapturedOutput output) {
		this.contextRunner
			.withPropertyValues(connectString(), "leader-election.zookeeper.base-path=/restricted",
					"leader-election.zookeeper.auth=app:secret")
			.run((context) -> {
				awaitLease(context.getBean(ZookeeperLeaseStore.class));
				CuratorFramework insider = CuratorFrameworkFactory.builder()
					.connectString(server.getConnectString())
					.retryPolicy(new RetryOneTime(100))
					.authorization("digest", "app:secret".getBytes(StandardCharsets.UTF_8))
					.build();
				CuratorFramework stranger = startedClient();
				try {
					insider.start();
					for (String path : List.of("/restricted", "/restricted/orders")) {
						List<ACL> acl = insider.getACL().forPath(path);
						assertThat(acl).as(path).singleElement().satisfies((entry) -> {
							assertThat(entry.getPerms()).isEqualTo(ZooDefs.Perms.ALL);
							assertThat(entry.getId().getScheme()).isEqualTo("digest");
							assertThat(entry.getId().getId()).startsWith("app:");
						});
					}
					assertThatExceptionOfType(KeeperException.NoAuthException.class)
						.isThrownBy(() -> stranger.setData().forPath("/restricted/orders", new byte[] { 1 }));
					assertThatExceptionOfType(KeeperException.NoAuthException.class)
						.isThrownBy(() -> stranger.create().forPath("/restricted/orders/intruder"));
					assertThatExceptionOfType(KeeperException.NoAuthException.class)
						.isThrownBy(() -> stranger.getData().forPath("/restricted/orders"));
				}
				finally {
					insider.close();
					stranger.close();
				}
			});
		assertThat(output).doesNotContain("open ACLs");
	}

	@Test
	void warnsThatNodesAreWritableByAnyoneWithoutAuth(CapturedOutput output) {
		this.contextRunner.withPropertyValues(connectString())
			.run((context) -> assertThat(context).hasSingleBean(ZookeeperLeaseStore.class));
		assertThat(output).contains("WARN")
			.contains("Leader election creates its ZooKeeper nodes under /leader-election with open ACLs: they are "
					+ "readable and writable by anyone who reaches ZooKeeper")
			.contains("Set leader-election.zookeeper.auth to digest credentials 'user:password'");
	}

	/** Takes a lease in group 'orders', once the client is connected. */
	private static void awaitLease(ZookeeperLeaseStore store) {
		await().atMost(Duration.ofSeconds(20))
			.ignoreExceptions()
			.until(() -> store.tryAcquire("orders", "a", Duration.ofSeconds(15), Duration.ofSeconds(5)).isPresent());
	}

	private static String connectString() {
		return "leader-election.zookeeper.connect-string=" + server.getConnectString();
	}

	private static CuratorFramework startedClient() {
		CuratorFramework client = CuratorFrameworkFactory.newClient(server.getConnectString(), 15_000, 5_000,
				new RetryOneTime(100));
		client.start();
		return client;
	}

}
