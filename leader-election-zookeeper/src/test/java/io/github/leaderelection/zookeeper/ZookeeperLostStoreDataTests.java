package io.github.leaderelection.zookeeper;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.test.store.LostStoreDataContractTests;
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
import static org.awaitility.Awaitility.await;

/**
 * A lost group node in ZooKeeper: nodes deleted, older data set back and terms lowered
 * with plain Curator calls, as an operator or a restore from an older snapshot would;
 * every store on a session of its own.
 */
@Order(2)
class ZookeeperLostStoreDataTests extends LostStoreDataContractTests {

	/** At least the kit's lease, which the store requires of the session. */
	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(40);

	private static final GroupPaths PATHS = new GroupPaths("/lost");

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
			return new ZookeeperLeaseStore(client, "/lost", false);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@Override
	protected void delete(List<String> groups) {
		for (String group : groups) {
			run(() -> admin.delete().deletingChildrenIfNeeded().forPath(PATHS.group(group)));
		}
	}

	@Override
	protected Object copy(String group) {
		return run(() -> admin.getData().forPath(PATHS.group(group)));
	}

	@Override
	protected void restore(String group, Object copy) {
		run(() -> admin.setData().forPath(PATHS.group(group), (byte[]) copy));
	}

	@Override
	protected void setTerm(String group, long term) {
		Grant grant = Grant.parse((byte[]) copy(group));
		Grant lowered = new Grant(term, grant.holder(), grant.node(), grant.session(), grant.leaseMillis(),
				grant.quietMillis());
		restore(group, lowered.bytes());
	}

	@Override
	protected void setHolder(String group, String holder) {
		Grant grant = Grant.parse((byte[]) copy(group));
		restore(group,
				new Grant(grant.term(), holder, grant.node(), grant.session(), grant.leaseMillis(), grant.quietMillis())
					.bytes());
	}

	@Test
	void holdersNodeDeletedByHandIsTakenOnlyAfterOneLease() {
		LeaseStore holder = createStore();
		ZookeeperLeaseStore next = (ZookeeperLeaseStore) createStore();
		String group = "by-hand-" + UUID.randomUUID();
		Lease held = holder.tryAcquire(group, "a", LEASE, TIMEOUT).orElseThrow();
		next.join(group, "b", TIMEOUT);
		deleteHoldersNode(group);
		Lease taken = next.tryAcquire(group, "b", LEASE, TIMEOUT).orElseThrow();
		assertThat(taken.term()).isGreaterThan(held.term());
		assertThat(taken.activeIn()).isEqualTo(LEASE);
		assertThat(holder.renew(held, LEASE, TIMEOUT)).isEmpty();
	}

	@Test
	void holdersNodeGoneWithItsSessionIsTakenAtOnce() throws Exception {
		CuratorFramework holderClient = ZookeeperTesting.startedClient(server.getConnectString(), SESSION_TIMEOUT);
		this.clients.add(holderClient);
		LeaseStore holder = new ZookeeperLeaseStore(holderClient, "/lost", false);
		ZookeeperLeaseStore next = (ZookeeperLeaseStore) createStore();
		String group = "session-ended-" + UUID.randomUUID();
		Lease held = holder.tryAcquire(group, "a", LEASE, TIMEOUT).orElseThrow();
		next.join(group, "b", TIMEOUT);
		holderClient.close(); // ends the session: ZooKeeper deletes its nodes at once
		Lease taken = next.tryAcquire(group, "b", LEASE, TIMEOUT).orElseThrow();
		assertThat(taken.term()).isGreaterThan(held.term());
		assertThat(taken.activeIn()).isZero();
	}

	@Test
	void sessionMarkDeletedByHandIsMadeAgainByTheNextRenewal() throws Exception {
		LeaseStore holder = createStore();
		ZookeeperLeaseStore next = (ZookeeperLeaseStore) createStore();
		String group = "mark-" + UUID.randomUUID();
		Lease held = holder.tryAcquire(group, "a", LEASE, TIMEOUT).orElseThrow();
		String mark = PATHS.base() + "/" + SessionMarks.PREFIX
				+ Long.toHexString(Grant.parse((byte[]) copy(group)).session());
		admin.delete().forPath(mark);
		await().atMost(Duration.ofSeconds(10)).until(() -> {
			holder.renew(held, LEASE, TIMEOUT).orElseThrow();
			return admin.checkExists().forPath(mark) != null;
		});
		next.join(group, "b", TIMEOUT);
		deleteHoldersNode(group);
		assertThat(next.tryAcquire(group, "b", LEASE, TIMEOUT).orElseThrow().activeIn()).isEqualTo(LEASE);
	}

	private void deleteHoldersNode(String group) {
		String node = Objects.requireNonNull(Grant.parse((byte[]) copy(group)).node());
		run(() -> admin.delete().forPath(PATHS.node(group, node)));
	}

	private static <T> T run(Call<T> call) {
		try {
			return call.call();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	@FunctionalInterface
	private interface Call<T> {

		T call() throws Exception;

	}

}
