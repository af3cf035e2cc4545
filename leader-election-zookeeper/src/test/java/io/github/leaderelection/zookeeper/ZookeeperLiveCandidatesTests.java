package io.github.leaderelection.zookeeper;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.testing.TcpProxy;
import io.github.leaderelection.testing.ZookeeperTesting;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.CloseableUtils;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The list of live candidates on ZooKeeper: an ephemeral node per candidate, which lives
 * as long as its store's session, listed with one request per call. Every store is on a
 * client (a session) of its own, as on several machines.
 */
@Order(3)
class ZookeeperLiveCandidatesTests {

	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(40);

	/** What the SPI passes and ZooKeeper does not use: the session decides. */
	private static final Duration TTL = Duration.ofSeconds(2);

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final String BASE_PATH = "/candidates-test";

	private static TestingServer server;

	private final List<CuratorFramework> clients = new CopyOnWriteArrayList<>();

	private final List<AutoCloseable> proxies = new CopyOnWriteArrayList<>();

	/** A client of its own for the tests' direct looks at the nodes. */
	private CuratorFramework admin;

	@BeforeAll
	static void startServer() throws Exception {
		ZookeeperTesting.quietLogs();
		server = new TestingServer(
				new InstanceSpec(null, -1, -1, -1, true, -1, 1000, -1, Map.of("maxSessionTimeout", "60000")), true);
	}

	@AfterAll
	static void stopServer() {
		CloseableUtils.closeQuietly(server);
	}

	@BeforeEach
	void createAdmin() {
		this.admin = client(server.getConnectString());
	}

	@AfterEach
	void closeClients() throws Exception {
		this.clients.forEach(CloseableUtils::closeQuietly);
		for (AutoCloseable proxy : this.proxies) {
			proxy.close();
		}
	}

	/**
	 * One getChildren per call while the session and the weight stay, whoever else comes,
	 * goes or changes weight meanwhile; a new weight costs one write more, which replaces
	 * the node so that the candidate is never listed twice.
	 */
	@Test
	void costsOneRequestPerCallWhileTheSessionAndTheWeightStay() throws Exception {
		RequestCountingProxy proxy = new RequestCountingProxy(server.getPort());
		this.proxies.add(proxy);
		ZookeeperLeaseStore store = store(client(proxy.connectString()));
		ZookeeperLeaseStore other = store(client(server.getConnectString()));
		String self = newCandidate();
		String peer = newCandidate();
		assertThat(store.keepCandidateAlive(self, 1, TTL, TIMEOUT)).containsEntry(self, 1);
		long before = settled(proxy);
		for (int i = 0; i < 5; i++) {
			assertThat(store.keepCandidateAlive(self, 1, TTL, TIMEOUT)).containsEntry(self, 1);
		}
		assertThat(settled(proxy) - before).isEqualTo(5);
		before = settled(proxy);
		other.keepCandidateAlive(peer, 2, TTL, TIMEOUT);
		assertThat(store.keepCandidateAlive(self, 1, TTL, TIMEOUT)).containsEntry(self, 1).containsEntry(peer, 2);
		other.keepCandidateAlive(peer, 5, TTL, TIMEOUT);
		assertThat(store.keepCandidateAlive(self, 1, TTL, TIMEOUT)).containsEntry(peer, 5);
		other.removeCandidate(peer, TIMEOUT);
		assertThat(store.keepCandidateAlive(self, 1, TTL, TIMEOUT)).doesNotContainKey(peer);
		assertThat(settled(proxy) - before).isEqualTo(3);
		before = settled(proxy);
		assertThat(store.keepCandidateAlive(self, 4, TTL, TIMEOUT)).containsEntry(self, 4);
		assertThat(settled(proxy) - before).isEqualTo(2);
		assertThat(nodesOf(self)).containsExactly(GroupPaths.encode(self) + "@4");
		before = settled(proxy);
		assertThat(store.keepCandidateAlive(self, 4, TTL, TIMEOUT)).containsEntry(self, 4);
		assertThat(settled(proxy) - before).isEqualTo(1);
	}

	/**
	 * The entry lives as long as the session, not its time to live, and goes with the
	 * session, without anybody deleting it.
	 */
	@Test
	void listsACandidateAsLongAsItsSessionLives() throws Exception {
		CuratorFramework client = client(server.getConnectString());
		ZookeeperLeaseStore store = store(client);
		ZookeeperLeaseStore other = store(client(server.getConnectString()));
		String gone = newCandidate();
		String reader = newCandidate();
		store.keepCandidateAlive(gone, 3, TTL, TIMEOUT);
		Thread.sleep(TTL.toMillis() + 500);
		assertThat(other.keepCandidateAlive(reader, 1, TTL, TIMEOUT)).containsEntry(gone, 3);
		ZookeeperTesting.expireSession(client, server.getConnectString());
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(other.keepCandidateAlive(reader, 1, TTL, TIMEOUT)).doesNotContainKey(gone)
				.containsKey(reader));
	}

	/**
	 * A store whose own session expired announces its candidate again at its next call,
	 * in the new session: a create more, then the list as usual.
	 */
	@Test
	void announcesACandidateAgainAfterItsOwnSessionExpired() throws Exception {
		RequestCountingProxy proxy = new RequestCountingProxy(server.getPort());
		this.proxies.add(proxy);
		CuratorFramework client = client(proxy.connectString());
		ZookeeperLeaseStore store = store(client);
		ZookeeperLeaseStore other = store(client(server.getConnectString()));
		String candidate = newCandidate();
		String reader = newCandidate();
		store.keepCandidateAlive(candidate, 2, TTL, TIMEOUT);
		ZookeeperTesting.expireSession(client, server.getConnectString());
		assertThat(other.keepCandidateAlive(reader, 1, TTL, TIMEOUT)).doesNotContainKey(candidate);
		long before = settled(proxy);
		assertThat(store.keepCandidateAlive(candidate, 2, TTL, TIMEOUT)).containsEntry(candidate, 2)
			.containsEntry(reader, 1);
		assertThat(settled(proxy) - before).isEqualTo(2);
		assertThat(other.keepCandidateAlive(reader, 1, TTL, TIMEOUT)).containsEntry(candidate, 2);
		Stat stat = this.admin.checkExists().forPath(nodePath(candidate, 2));
		assertThat(stat.getEphemeralOwner()).isEqualTo(client.getZookeeperClient().getZooKeeper().getSessionId());
		before = settled(proxy);
		store.keepCandidateAlive(candidate, 2, TTL, TIMEOUT);
		assertThat(settled(proxy) - before).isEqualTo(1);
	}

	@Test
	void announcesAgainACandidateWhoseNodeWasDeletedBehindItsBack() throws Exception {
		ZookeeperLeaseStore store = store(client(server.getConnectString()));
		ZookeeperLeaseStore other = store(client(server.getConnectString()));
		String candidate = newCandidate();
		String reader = newCandidate();
		store.keepCandidateAlive(candidate, 1, TTL, TIMEOUT);
		this.admin.delete().forPath(nodePath(candidate, 1));
		assertThat(other.keepCandidateAlive(reader, 1, TTL, TIMEOUT)).doesNotContainKey(candidate);
		assertThat(store.keepCandidateAlive(candidate, 1, TTL, TIMEOUT)).containsEntry(candidate, 1);
		assertThat(other.keepCandidateAlive(reader, 1, TTL, TIMEOUT)).containsEntry(candidate, 1);
	}

	/**
	 * Nothing can be listed without a connection: the call fails at once while SUSPENDED,
	 * and within its timeout when the server stops answering unnoticed. The session
	 * survives either, and with it the node, which is not written again.
	 */
	@Test
	void failsWithinTheTimeoutWithoutAConnectionAndWritesNothingAfter() throws Exception {
		TcpProxy proxy = new TcpProxy(server.getPort());
		this.proxies.add(proxy);
		CuratorFramework client = client(proxy.connectString());
		ZookeeperLeaseStore store = store(client);
		String candidate = newCandidate();
		store.keepCandidateAlive(candidate, 1, TTL, TIMEOUT);
		long created = this.admin.checkExists().forPath(nodePath(candidate, 1)).getCzxid();
		Duration shortTimeout = Duration.ofSeconds(1);
		proxy.holdAnswers();
		long start = System.nanoTime();
		assertThatThrownBy(() -> store.keepCandidateAlive(candidate, 1, TTL, shortTimeout))
			.isInstanceOf(LeaderElectionException.class)
			.hasMessageContaining("did not answer in time");
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(shortTimeout.plusMillis(500));
		proxy.refuse();
		await().atMost(Duration.ofSeconds(30))
			.untilAsserted(() -> assertThatThrownBy(() -> store.keepCandidateAlive(candidate, 1, TTL, TIMEOUT))
				.hasMessageContaining("SUSPENDED"));
		start = System.nanoTime();
		assertThatThrownBy(() -> store.keepCandidateAlive(candidate, 1, TTL, TIMEOUT))
			.isInstanceOf(LeaderElectionException.class)
			.hasMessageContaining("Not connected to ZooKeeper (SUSPENDED)");
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(500));
		proxy.heal();
		await().atMost(Duration.ofSeconds(20))
			.ignoreExceptions()
			.untilAsserted(
					() -> assertThat(store.keepCandidateAlive(candidate, 1, TTL, TIMEOUT)).containsEntry(candidate, 1));
		assertThat(this.admin.checkExists().forPath(nodePath(candidate, 1)).getCzxid()).isEqualTo(created);
	}

	/**
	 * A store removes only what it created in its current session: a candidate it never
	 * announced, or a node of the same name that another session created since its own
	 * ended (a twin with the same id), is left alone.
	 */
	@Test
	void removesOnlyWhatItCreatedInItsCurrentSession() throws Exception {
		CuratorFramework client = client(server.getConnectString());
		ZookeeperLeaseStore store = store(client);
		ZookeeperLeaseStore twin = store(client(server.getConnectString()));
		String candidate = newCandidate();
		store.keepCandidateAlive(candidate, 1, TTL, TIMEOUT);
		twin.removeCandidate(candidate, TIMEOUT);
		assertThat(nodesOf(candidate)).hasSize(1);
		// While one twin's node lives, the other lists it and creates none.
		assertThat(twin.keepCandidateAlive(candidate, 1, TTL, TIMEOUT)).containsEntry(candidate, 1);
		ZookeeperTesting.expireSession(client, server.getConnectString());
		assertThat(twin.keepCandidateAlive(candidate, 1, TTL, TIMEOUT)).containsEntry(candidate, 1);
		store.removeCandidate(candidate, TIMEOUT);
		assertThat(nodesOf(candidate)).hasSize(1);
		twin.removeCandidate(candidate, TIMEOUT);
		assertThat(nodesOf(candidate)).isEmpty();
	}

	@Test
	void refusesACandidateIdThatItCouldNotListUnderItsName() {
		ZookeeperLeaseStore store = store(client(server.getConnectString()));
		assertThatThrownBy(() -> store.keepCandidateAlive("a\uD800b", 1, TTL, TIMEOUT))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("unpaired surrogate");
		String odd = newCandidate() + " é/%@.";
		assertThat(store.keepCandidateAlive(odd, 1, TTL, TIMEOUT)).containsEntry(odd, 1);
		assertThat(store.keepCandidateAlive("", 1, TTL, TIMEOUT)).containsEntry("", 1).containsEntry(odd, 1);
		store.removeCandidate("", TIMEOUT);
		store.removeCandidate(odd, TIMEOUT);
	}

	private List<String> nodesOf(String candidate) throws Exception {
		return this.admin.getChildren()
			.forPath(BASE_PATH + "/" + GroupPaths.CANDIDATES)
			.stream()
			.filter((node) -> node.startsWith(GroupPaths.encode(candidate) + "@"))
			.toList();
	}

	private static String nodePath(String candidate, int weight) {
		return new GroupPaths(BASE_PATH).candidate(GroupPaths.encode(candidate) + "@" + weight);
	}

	private CuratorFramework client(String connectString) {
		try {
			CuratorFramework client = ZookeeperTesting.startedClient(connectString, SESSION_TIMEOUT);
			this.clients.add(client);
			return client;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static ZookeeperLeaseStore store(CuratorFramework client) {
		return new ZookeeperLeaseStore(client, BASE_PATH, false);
	}

	/** The packets sent once the client has sent nothing for a while. */
	private static long settled(RequestCountingProxy proxy) throws InterruptedException {
		long packets = proxy.packets();
		for (int quiet = 0; quiet < 3; quiet++) {
			Thread.sleep(100);
			if (proxy.packets() != packets) {
				packets = proxy.packets();
				quiet = -1;
			}
		}
		return packets;
	}

	private static String newCandidate() {
		return "candidate-" + UUID.randomUUID();
	}

}
