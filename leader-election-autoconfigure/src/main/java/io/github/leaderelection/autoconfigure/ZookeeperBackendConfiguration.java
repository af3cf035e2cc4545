package io.github.leaderelection.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.actuate.LeaderElectionParticipants;
import io.github.leaderelection.autoconfigure.LeaderElectionZookeeperProperties.Acl;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.zookeeper.ZookeeperLeaseStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Elects through ZooKeeper: with a Curator client of its own when
 * {@code leader-election.zookeeper.connect-string} is set, otherwise with the
 * application's {@link CuratorFramework}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = "org.apache.curator.framework.CuratorFramework")
@ConditionalOnMissingBean({ LeaseStore.class, LeaderElectionRegistry.class })
@ConditionalOnLeaderElectionBackend(LeaderElectionBackend.ZOOKEEPER)
@EnableConfigurationProperties(LeaderElectionZookeeperProperties.class)
class ZookeeperBackendConfiguration {

	static final String CONNECT_STRING_PROPERTY = "leader-election.zookeeper.connect-string";

	private static final String SESSION_TIMEOUT_PROPERTY = "leader-election.zookeeper.session-timeout";

	private static final String BASE_PATH_PROPERTY = "leader-election.zookeeper.base-path";

	private static final Logger logger = LoggerFactory.getLogger(ZookeeperBackendConfiguration.class);

	/**
	 * The client built from the connect string. Not a {@link CuratorFramework} bean, so
	 * that it never competes with the application's own.
	 */
	@Bean
	@ConditionalOnProperty(CONNECT_STRING_PROPERTY)
	LeaderElectionCuratorClient leaderElectionCuratorClient(LeaderElectionZookeeperProperties zookeeper,
			LeaderElectionProperties properties) {
		Duration leaseDuration = properties.getLeaseDuration();
		Duration sessionTimeout = Optional.ofNullable(zookeeper.getSessionTimeout()).orElse(leaseDuration);
		if (sessionTimeout.compareTo(leaseDuration) < 0) {
			throw new LeaderElectionConfigurationException(SESSION_TIMEOUT_PROPERTY + " (" + print(sessionTimeout)
					+ ") is shorter than leader-election.lease-duration (" + print(leaseDuration)
					+ "): a leader cut off "
					+ "from ZooKeeper could still believe it leads when its session expires and another instance takes "
					+ "over.",
					"Set " + SESSION_TIMEOUT_PROPERTY + " to at least leader-election.lease-duration, or "
							+ "remove it to use the lease duration.");
		}
		String auth = zookeeper.getAuth();
		if (auth != null && auth.indexOf(':') < 1) {
			throw new LeaderElectionConfigurationException(
					"Invalid value for leader-election.zookeeper.auth: digest credentials are 'user:password'.",
					"Set leader-election.zookeeper.auth to 'user:password', or remove it.");
		}
		Acl acl = zookeeper.determineAcl();
		if (acl == Acl.CREATOR && auth == null) {
			throw new LeaderElectionConfigurationException(
					"leader-election.zookeeper.acl is 'creator', which gives access to the authenticated creator only, "
							+ "but leader-election.zookeeper.auth is not set.",
					"Set leader-election.zookeeper.auth to the 'user:password' that every instance shares, or set "
							+ "leader-election.zookeeper.acl=open.");
		}
		CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
			.connectString(zookeeper.getConnectString())
			.sessionTimeoutMs(Math.toIntExact(sessionTimeout.toMillis()))
			.connectionTimeoutMs(Math.toIntExact(zookeeper.getConnectionTimeout().toMillis()))
			// Every store call has its own timeout (the retry period); retries only
			// finish late calls.
			.retryPolicy(new ExponentialBackoffRetry(100, 3, 1000));
		if (auth != null) {
			builder.authorization("digest", auth.getBytes(StandardCharsets.UTF_8));
		}
		if (acl == Acl.CREATOR) {
			builder.aclProvider(new CreatorAclProvider());
		}
		else {
			// Not a failure: a ZooKeeper reachable only by trusted hosts is a common
			// setup.
			// But nodes anyone can write let anyone take or break the election, which
			// should not go unsaid.
			logger.warn("Leader election creates its ZooKeeper nodes under {} with open ACLs: they are readable and "
					+ "writable by anyone who reaches ZooKeeper, who can then take, hold or break the election. Set "
					+ "leader-election.zookeeper.auth to digest credentials 'user:password', the same on every "
					+ "instance, to restrict them to that identity{}.", zookeeper.getBasePath(),
					(auth != null) ? " (and remove leader-election.zookeeper.acl=open)" : "");
		}
		CuratorFramework client = builder.build();
		client.start();
		return new LeaderElectionCuratorClient(client);
	}

	@Bean
	ZookeeperLeaseStore leaderElectionLeaseStore(LeaderElectionZookeeperProperties zookeeper,
			LeaderElectionProperties properties, Optional<LeaderElectionCuratorClient> ownClient,
			ObjectProvider<CuratorFramework> applicationClient, ListableBeanFactory beanFactory) {
		CuratorFramework client = ownClient.map(LeaderElectionCuratorClient::client)
			.orElseGet(applicationClient::getIfUnique);
		if (client == null) {
			throw new LeaderElectionConfigurationException(
					"Leader election uses the zookeeper backend but cannot choose among the CuratorFramework beans "
							+ Arrays.toString(beanFactory.getBeanNamesForType(CuratorFramework.class, true, false))
							+ ": none is marked @Primary.",
					"Mark the CuratorFramework to elect through with @Primary, set " + CONNECT_STRING_PROPERTY
							+ " to give leader election a client of its own, or set "
							+ BackendDetection.BACKEND_PROPERTY + " to another backend.");
		}
		ZookeeperLeaseStore store;
		try {
			store = new ZookeeperLeaseStore(client, zookeeper.getBasePath(), zookeeper.isKeepLeadingWhileSuspended());
		}
		catch (IllegalArgumentException ex) {
			throw new LeaderElectionConfigurationException(
					"Invalid value '" + zookeeper.getBasePath() + "' for " + BASE_PATH_PROPERTY + ": "
							+ ex.getMessage(),
					"Set " + BASE_PATH_PROPERTY + " to an absolute path of letters, digits and '_', '.', '-', such as "
							+ "/apps/orders/leader-election, or remove it to use /leader-election.",
					ex);
		}
		checkSessionTimeout(client, ownClient.isPresent() ? zookeeper.getConnectionTimeout() : Duration.ZERO,
				properties.getLeaseDuration());
		return store;
	}

	/**
	 * ZooKeeper knows who takes part in a group (one node per candidate): the endpoint
	 * lists them, and refuses to force a candidate that is not one of them.
	 */
	@Bean
	@ConditionalOnMissingBean(LeaderElectionParticipants.class)
	LeaderElectionParticipants zookeeperLeaderElectionParticipants(ZookeeperLeaseStore store) {
		return (group) -> Optional.of(store.participants(group));
	}

	/**
	 * The servers may grant a shorter session than asked for (at most 20 ticks by
	 * default): fail now rather than refuse every grant later. Skipped when ZooKeeper
	 * cannot be reached yet; the store then refuses to grant until the session is long
	 * enough.
	 */
	private static void checkSessionTimeout(CuratorFramework client, Duration wait, Duration leaseDuration) {
		int granted;
		try {
			if (!client.getZookeeperClient().isConnected() && (wait.isZero()
					|| !client.blockUntilConnected(Math.toIntExact(wait.toMillis()), TimeUnit.MILLISECONDS))) {
				logger.warn("Not connected to ZooKeeper yet: leader election starts once it is");
				return;
			}
			granted = client.getZookeeperClient().getZooKeeper().getSessionTimeout();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return;
		}
		catch (Exception ex) {
			logger.warn("Could not read the ZooKeeper session timeout: {}", ex.toString());
			return;
		}
		if (granted > 0 && granted < leaseDuration.toMillis()) {
			throw new LeaderElectionConfigurationException("The ZooKeeper servers granted a session timeout of "
					+ granted + " ms, shorter than leader-election.lease-duration (" + print(leaseDuration) + "): a "
					+ "leader cut off from ZooKeeper could still believe it leads when its session expires and another "
					+ "instance takes over.",
					"Raise maxSessionTimeout on the ZooKeeper servers (20 x tickTime by default) to at least the lease "
							+ "duration, or lower leader-election.lease-duration (with renew-deadline and retry-period).");
		}
	}

	private static String print(Duration duration) {
		return DurationStyle.SIMPLE.print(duration,
				(duration.toMillisPart() == 0) ? ChronoUnit.SECONDS : ChronoUnit.MILLIS);
	}

	/**
	 * The Curator client that leader election built for itself, closed with the context.
	 *
	 * @param client the started client
	 */
	record LeaderElectionCuratorClient(CuratorFramework client) implements AutoCloseable {

		@Override
		public void close() {
			this.client.close();
		}

	}

	/** Gives the nodes leader election creates to their authenticated creator only. */
	private static final class CreatorAclProvider implements ACLProvider {

		@Override
		public List<ACL> getDefaultAcl() {
			return ZooDefs.Ids.CREATOR_ALL_ACL;
		}

		@Override
		public List<ACL> getAclForPath(String path) {
			return ZooDefs.Ids.CREATOR_ALL_ACL;
		}

	}

}
