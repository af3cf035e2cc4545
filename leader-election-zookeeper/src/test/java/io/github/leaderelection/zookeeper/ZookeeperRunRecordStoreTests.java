package io.github.leaderelection.zookeeper;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.test.store.RunRecordStoreContractTests;
import io.github.leaderelection.testing.ZookeeperTesting;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.CloseableUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Run record contract tests for {@link ZookeeperLeaseStore}, every store on a session of
 * its own. A lease here ends with its holder's queue node (a session that ended), not
 * after a time: the tests that let a lease end do so by deleting that node.
 */
@Order(2)
class ZookeeperRunRecordStoreTests extends RunRecordStoreContractTests {

	/** At least the kit's lease, which the store requires of the session. */
	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(40);

	private static final String BASE_PATH = "/runs";

	private static TestingServer server;

	private static CuratorFramework admin;

	private final List<CuratorFramework> clients = new CopyOnWriteArrayList<>();

	@BeforeAll
	static void startServer() throws Exception {
		ZookeeperTesting.quietLogs();
		server = new TestingServer(
				new InstanceSpec(null, -1, -1, -1, true, -1, 1000, -1, Map.of("maxSessionTimeout", "60000")), true);
		admin = ZookeeperTesting.startedClient(server.getConnectString(), SESSION_TIMEOUT);
	}

	@AfterAll
	static void stopServer() {
		CloseableUtils.closeQuietly(admin);
		CloseableUtils.closeQuietly(server);
	}

	@AfterEach
	void closeClients() {
		this.clients.forEach(CloseableUtils::closeQuietly);
	}

	@Override
	protected LeaseStore createStore() {
		try {
			CuratorFramework client = ZookeeperTesting.startedClient(server.getConnectString(), SESSION_TIMEOUT);
			this.clients.add(client);
			return new ZookeeperLeaseStore(client, BASE_PATH, false);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@Test
	@Override
	protected void refusesAClaimUnderALeaseTheGroupsRecordNoLongerHas() {
		String group = newGroup();
		ZookeeperLeaseStore first = (ZookeeperLeaseStore) createStore();
		Lease lease = acquire(first, group, "a", LIVE);
		endSessionOf(group, "a");
		ZookeeperLeaseStore other = (ZookeeperLeaseStore) createStore();
		Lease next = acquire(other, group, "b", LIVE);
		assertThat(first.claimRun(lease, run(lease, "report", TICK), Duration.ZERO, TIMEOUT))
			.as("a claim under the lease taken over")
			.isFalse();
		assertThat(other.claimRun(next, run(next, "report", TICK), Duration.ZERO, TIMEOUT)).isTrue();
		assertThat(first.lastRun(group, "report", TIMEOUT).orElseThrow().holder()).isEqualTo("b");
	}

	@Test
	@Override
	protected void refusesAClaimUnderAnExpiredLease() {
		String group = newGroup();
		ZookeeperLeaseStore store = (ZookeeperLeaseStore) createStore();
		Lease lease = acquire(store, group, "a", LIVE);
		endSessionOf(group, "a");
		assertThat(store.claimRun(lease, run(lease, "report", TICK), Duration.ZERO, TIMEOUT)).isFalse();
		assertThat(store.lastRun(group, "report", TIMEOUT)).isEmpty();
	}

	/** Deletes the candidate's queue node, as the end of its session would. */
	private static void endSessionOf(String group, String candidateId) {
		try {
			String groupPath = new GroupPaths(BASE_PATH).group(group);
			for (String child : admin.getChildren().forPath(groupPath)) {
				String path = groupPath + "/" + child;
				if (candidateId.equals(new String(admin.getData().forPath(path)))) {
					admin.delete().forPath(path);
				}
			}
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

}
