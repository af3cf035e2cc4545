package io.github.leaderelection.testing;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import ch.qos.logback.classic.Level;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Clients and session faults for the ZooKeeper tests.
 */
public final class ZookeeperTesting {

	private ZookeeperTesting() {
	}

	/**
	 * ZooKeeper's servers and clients log every packet at debug level, which slows a
	 * small machine.
	 */
	public static void quietLogs() {
		for (String name : new String[] { "org.apache.zookeeper", "org.apache.curator" }) {
			((ch.qos.logback.classic.Logger) LoggerFactory.getLogger(name)).setLevel(Level.WARN);
		}
	}

	public static CuratorFramework unstartedClient(String connectString, Duration sessionTimeout) {
		return CuratorFrameworkFactory.builder()
			.connectString(connectString)
			.sessionTimeoutMs((int) sessionTimeout.toMillis())
			.connectionTimeoutMs(2000)
			.retryPolicy(new ExponentialBackoffRetry(50, 5, 500))
			// Otherwise Curator replaces the connect string by the ensemble's servers,
			// bypassing a proxy.
			.ensembleTracker(false)
			.build();
	}

	public static CuratorFramework startedClient(String connectString, Duration sessionTimeout)
			throws InterruptedException {
		CuratorFramework client = unstartedClient(connectString, sessionTimeout);
		client.start();
		assertThat(client.blockUntilConnected(30, TimeUnit.SECONDS)).as("connected to %s", connectString).isTrue();
		return client;
	}

	/**
	 * Ends a client's session on the server, as a session timeout does (the server
	 * deletes its ephemeral nodes at once), and waits until the client runs on a new
	 * session.
	 */
	public static void expireSession(CuratorFramework client, String connectString) throws Exception {
		ZooKeeper zooKeeper = client.getZookeeperClient().getZooKeeper();
		long sessionId = zooKeeper.getSessionId();
		CountDownLatch connected = new CountDownLatch(1);
		ZooKeeper twin = new ZooKeeper(connectString, 30_000, (event) -> {
			if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
				connected.countDown();
			}
		}, sessionId, zooKeeper.getSessionPasswd());
		try {
			assertThat(connected.await(30, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			twin.close();
		}
		await().atMost(Duration.ofSeconds(30))
			.until(() -> client.getZookeeperClient().isConnected()
					&& client.getZookeeperClient().getZooKeeper().getSessionId() != sessionId);
	}

}
