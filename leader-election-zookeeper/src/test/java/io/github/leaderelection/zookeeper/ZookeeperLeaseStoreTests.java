package io.github.leaderelection.zookeeper;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.Optional;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.leaderelection.testing.ZookeeperTesting;
import io.github.leaderelection.testing.TcpProxy;

import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.test.store.LeaseStoreContractTests;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.listen.ListenerManager;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.CloseableUtils;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.client.ZKClientConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Contract tests for {@link ZookeeperLeaseStore} on an in-process ZooKeeper server, every
 * store on a client (a session) of its own, as candidates on several machines would be;
 * then what only ZooKeeper has: sessions, the queue and its watches.
 */
@Order(1)
class ZookeeperLeaseStoreTests extends LeaseStoreContractTests {

	/**
	 * At least the kit's longest lease (30 s), which the store requires of the session.
	 */
	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(40);

	private static final String BASE_PATH = "/contract";

	private static TestingServer server;

	private final List<CuratorFramework> clients = new CopyOnWriteArrayList<>();

	private final List<TcpProxy> proxies = new CopyOnWriteArrayList<>();

	private final List<RequestCountingProxy> countingProxies = new CopyOnWriteArrayList<>();

	@BeforeAll
	static void startServer() throws Exception {
		ZookeeperTesting.quietLogs();
		// One-second ticks, as curator-test's default, but sessions of up to a minute.
		server = new TestingServer(
				new InstanceSpec(null, -1, -1, -1, true, -1, 1000, -1, Map.of("maxSessionTimeout", "60000")), true);
	}

	@AfterAll
	static void stopServer() {
		CloseableUtils.closeQuietly(server);
	}

	@AfterEach
	void closeClients() {
		this.clients.forEach(CloseableUtils::closeQuietly);
		this.proxies.forEach(TcpProxy::close);
		this.countingProxies.forEach(RequestCountingProxy::close);
	}

	@Override
	protected ZookeeperLeaseStore createStore() {
		return store(client(server.getConnectString()));
	}

	@Override
	protected LeaseStore createStoreWithIdentifier(String unsafeIdentifier) {
		CuratorFramework client = ZookeeperTesting.unstartedClient(server.getConnectString(), SESSION_TIMEOUT);
		this.clients.add(client);
		return new ZookeeperLeaseStore(client, unsafeIdentifier, false);
	}

	// The ZooKeeper equivalents of the kit tests that assume a lease ending after a time

	/** Overrides the kit's test: a lease ends with its holder's session. */
	@Test
	@Override
	protected void takesOverExpiredLeaseWithGreaterTermAndNoWait() throws Exception {
		String group = newGroup();
		CuratorFramework holderClient = client(server.getConnectString());
		ZookeeperLeaseStore holder = store(holderClient);
		Lease old = holder.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		ZookeeperTesting.expireSession(holderClient, server.getConnectString());
		awaitExpiry(holder, group);
		Lease lease = createStore().tryAcquire(group, "b", LIVE, TIMEOUT).orElseThrow();
		assertThat(lease.holder()).isEqualTo("b");
		assertThat(lease.term()).isGreaterThan(old.term());
		assertThat(lease.activeIn()).isZero();
		assertThat(holder.renew(old, LIVE, TIMEOUT)).isEmpty();
		assertThat(holder.read(group, TIMEOUT).orElseThrow().holder()).isEqualTo("b");
	}

	/**
	 * Overrides the kit's test: a lease cannot outlive its session, even when nobody took
	 * over (CURATOR-696: never lead on a node of an ended session). Acquiring again
	 * queues a new node and gives a greater term.
	 */
	@Test
	@Override
	protected void renewsExpiredLeaseThatNobodyTook() throws Exception {
		String group = newGroup();
		CuratorFramework holderClient = client(server.getConnectString());
		ZookeeperLeaseStore holder = store(holderClient);
		Lease lease = holder.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		ZookeeperTesting.expireSession(holderClient, server.getConnectString());
		awaitExpiry(holder, group);
		assertThat(holder.renew(lease, RENEWED, TIMEOUT)).isEmpty();
		Lease again = holder.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		assertThat(again.term()).isGreaterThan(lease.term());
		assertThat(again.activeIn()).isZero();
		assertThat(holder.renew(again, RENEWED, TIMEOUT)).isPresent();
		assertThat(createStore().tryAcquire(group, "b", LIVE, TIMEOUT)).isEmpty();
	}

	/**
	 * Overrides the kit's test, with a session that ends instead of a lease that runs
	 * out, and a forced candidate that takes part.
	 */
	@Test
	@Override
	protected void termsOnlyGrowAcrossAcquireExpiryReleaseForceAndClear() throws Exception {
		String group = newGroup();
		CuratorFramework client = client(server.getConnectString());
		ZookeeperLeaseStore store = store(client);
		ZookeeperLeaseStore other = store(client(server.getConnectString()));
		List<Long> terms = new ArrayList<>();
		terms.add(store.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow().term());
		terms.add(store.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow().term());
		ZookeeperTesting.expireSession(client, server.getConnectString());
		awaitExpiry(store, group);
		terms.add(read(store, group).term());
		Lease b = other.tryAcquire(group, "b", LIVE, TIMEOUT).orElseThrow();
		terms.add(b.term());
		other.release(b, TIMEOUT);
		terms.add(read(store, group).term());
		terms.add(store.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow().term());
		assertThat(other.tryAcquire(group, "b", LIVE, TIMEOUT)).isEmpty();
		store.forceLeader(group, "b", TIMEOUT);
		terms.add(read(store, group).term());
		terms.add(other.tryAcquire(group, "b", LIVE, TIMEOUT).orElseThrow().term());
		store.clear(group, TIMEOUT);
		terms.add(read(store, group).term());
		terms.add(store.tryAcquire(group, "c", LIVE, TIMEOUT).orElseThrow().term());
		assertThat(terms).isSorted();
		assertThat(List.of(terms.get(0), terms.get(1), terms.get(3), terms.get(5), terms.get(7), terms.get(9)))
			.doesNotHaveDuplicates();
	}

	/**
	 * Overrides the kit's test with a session that ends instead of a lease that runs out,
	 * and a forced candidate that takes part (only a participant can be forced).
	 */
	@Test
	@Override
	protected void acquiresExpiredAndForcedLeasesInOneCallAsOneByOne() throws Exception {
		String expired = newGroup();
		String forced = newGroup();
		CuratorFramework holderClient = client(server.getConnectString());
		ZookeeperLeaseStore holder = store(holderClient);
		Lease expiredLease = holder.tryAcquire(expired, "b", LIVE, TIMEOUT).orElseThrow();
		ZookeeperLeaseStore store = createStore();
		Lease forcedFrom = store.tryAcquire(forced, "b", LIVE, TIMEOUT).orElseThrow();
		Duration remainder = read(store, forced).expiresIn();
		ZookeeperLeaseStore target = createStore();
		assertThat(target.tryAcquire(forced, "a", LIVE, TIMEOUT)).isEmpty();
		store.forceLeader(forced, "a", TIMEOUT);
		long forcedTerm = read(store, forced).term();
		ZookeeperTesting.expireSession(holderClient, server.getConnectString());
		awaitExpiry(holder, expired);
		Map<String, Lease> taken = target.tryAcquireAll(List.of(expired, forced), "a", LIVE, TIMEOUT);
		assertThat(taken).containsOnlyKeys(expired, forced);
		assertThat(taken.get(expired).term()).isGreaterThan(expiredLease.term());
		assertThat(taken.get(expired).activeIn()).isZero();
		assertThat(taken.get(forced).term()).isGreaterThan(forcedTerm).isGreaterThan(forcedFrom.term());
		assertThat(taken.get(forced).activeIn()).isPositive().isLessThanOrEqualTo(remainder);
		assertThat(store.renew(forcedFrom, LIVE, TIMEOUT)).isEmpty();
	}

	/**
	 * Overrides the kit's test with a target that takes part: without a clock, ZooKeeper
	 * could never expire a lease named for a candidate that does not show up.
	 */
	@Test
	@Override
	protected void forcedLeaderTakesOverOnlyAfterCurrentLeaseEnds() {
		String group = newGroup();
		ZookeeperLeaseStore store = createStore();
		Lease old = store.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		Duration remainder = read(store, group).expiresIn();
		ZookeeperLeaseStore target = createStore();
		ZookeeperLeaseStore bystander = createStore();
		assertThat(target.tryAcquire(group, "b", LIVE, TIMEOUT)).isEmpty();
		store.forceLeader(group, "b", TIMEOUT);
		assertThat(store.renew(old, LIVE, TIMEOUT)).isEmpty();
		Lease forced = read(store, group);
		assertThat(forced.holder()).isEqualTo("b");
		assertThat(forced.term()).isGreaterThan(old.term());
		assertThat(forced.hasLiveHolder()).isTrue();
		assertThat(bystander.tryAcquire(group, "c", LIVE, TIMEOUT)).isEmpty();
		Lease lease = target.tryAcquire(group, "b", LIVE, TIMEOUT).orElseThrow();
		assertThat(lease.holder()).isEqualTo("b");
		assertThat(lease.term()).isGreaterThan(forced.term());
		assertThat(lease.activeIn()).isPositive().isLessThanOrEqualTo(remainder);
		assertThat(bystander.tryAcquire(group, "c", LIVE, TIMEOUT)).isEmpty();
		assertThat(store.renew(old, LIVE, TIMEOUT)).isEmpty();
	}

	/** Overrides the kit's test: only a participant can be forced. */
	@Test
	@Override
	protected void forcingLeaderOfUnknownGroupLetsItInAtOnce() {
		String unknown = newGroup();
		assertThatIllegalStateException().isThrownBy(() -> createStore().forceLeader(unknown, "b", TIMEOUT))
			.withMessageContaining("'b' does not take part");
		assertThat(createStore().read(unknown, TIMEOUT)).isEmpty();
		String group = newGroup();
		ZookeeperLeaseStore store = createStore();
		Lease lease = store.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		assertThatIllegalStateException().isThrownBy(() -> store.forceLeader(group, "b", TIMEOUT))
			.withMessageContaining("participants: [a]");
		assertThat(store.renew(lease, RENEWED, TIMEOUT)).isPresent();
	}

	/**
	 * The kit's test with a forced candidate that takes part, and a lease taken back
	 * under the same candidate id through another store once released through it:
	 * ZooKeeper tells candidates apart by their queue node, so no other store takes a
	 * live lease under the same id. Each of the three loses the holder's node, which the
	 * holder's store does not know: only the multi-operation finds it out.
	 */
	@Test
	@Override
	protected void renewsInOneCallOnlyLeasesThatNobodyForcedOrClearedOrTook() {
		String kept = newGroup();
		String forced = newGroup();
		String cleared = newGroup();
		String takenBack = newGroup();
		ZookeeperLeaseStore store = createStore();
		Lease keptLease = store.tryAcquire(kept, "a", SHORT, TIMEOUT).orElseThrow();
		Lease forcedLease = store.tryAcquire(forced, "a", LIVE, TIMEOUT).orElseThrow();
		Lease clearedLease = store.tryAcquire(cleared, "a", LIVE, TIMEOUT).orElseThrow();
		Lease oldLease = store.tryAcquire(takenBack, "a", LIVE, TIMEOUT).orElseThrow();
		ZookeeperLeaseStore other = createStore();
		other.join(forced, "b", TIMEOUT);
		other.forceLeader(forced, "b", TIMEOUT);
		other.clear(cleared, TIMEOUT);
		other.release(oldLease, TIMEOUT);
		Lease newLease = other.tryAcquire(takenBack, "a", LIVE, TIMEOUT).orElseThrow();
		assertThat(newLease.term()).isGreaterThan(oldLease.term());
		assertThat(store
			.renewAll(List.of(forcedLease, clearedLease, oldLease, keptLease,
					new Lease(newGroup(), "a", 1, LIVE, Duration.ZERO)), RENEWED, TIMEOUT)
			.keySet()).containsExactly(kept);
		assertThat(read(store, kept).expiresIn()).isGreaterThan(SHORT);
		assertThat(read(store, forced).holder()).isEqualTo("b");
		assertThat(read(store, cleared).holder()).isNull();
		assertThat(read(store, takenBack).term()).isEqualTo(newLease.term());
	}

	/**
	 * Overrides the kit's test: an entry lasts as long as its store's session, not its
	 * time to live, so the short-lived candidate is one whose session ends. It is listed
	 * past its time to live while the session lives, and not once the session expired.
	 */
	@Test
	@Override
	protected void listsLiveCandidatesWithTheirWeightsUntilTheirEntriesRunOut() {
		String a = newGroup();
		String b = newGroup();
		String brief = newGroup();
		ZookeeperLeaseStore store = createStore();
		assertThat(store.keepCandidateAlive(a, 1, LIVE, TIMEOUT)).containsEntry(a, 1);
		ZookeeperLeaseStore other = createStore();
		CuratorFramework briefClient = client(server.getConnectString());
		store(briefClient).keepCandidateAlive(brief, 1, SHORT, TIMEOUT);
		await().pollDelay(SHORT.plusMillis(100)).until(() -> true);
		Map<String, Integer> live = other.keepCandidateAlive(b, 3, LIVE, TIMEOUT);
		assertThat(live).containsEntry(a, 1).containsEntry(b, 3).containsEntry(brief, 1);
		expireSession(briefClient);
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(store.keepCandidateAlive(a, 2, LIVE, TIMEOUT)).doesNotContainKey(brief)
				.containsEntry(a, 2)
				.containsEntry(b, 3));
		other.removeCandidate(b, TIMEOUT);
		assertThat(store.keepCandidateAlive(a, 2, LIVE, TIMEOUT)).doesNotContainKey(b).containsKey(a);
		store.removeCandidate(a, TIMEOUT);
		store.removeCandidate(newGroup(), TIMEOUT); // unknown: nothing happens
		assertThat(other.keepCandidateAlive(b, 1, LIVE, TIMEOUT)).doesNotContainKey(a).containsEntry(b, 1);
		other.removeCandidate(b, TIMEOUT);
	}

	// ZooKeeper only

	/**
	 * One multi-operation renews 300 leases, and one read-only multi-operation reads
	 * their groups, counted as packets from the node to the server; a few leases lost
	 * behind the store's back cost two requests more (the failed one and a read), however
	 * many. The client has a namespace, which the read-only multi-operations (ZooKeeper's
	 * own API, not Curator's) must add.
	 */
	@Test
	void renewsAndReadsThreeHundredGroupsWithOneRequestEach() throws Exception {
		RequestCountingProxy proxy = countingProxy();
		CuratorFramework client = client(proxy.connectString()).usingNamespace("counted");
		ZookeeperLeaseStore store = store(client);
		List<String> groups = new ArrayList<>();
		List<Lease> leases = new ArrayList<>();
		for (int i = 0; i < 300; i++) {
			String group = newGroup();
			groups.add(group);
			leases.add(store.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow());
		}
		// A new lease duration: every grant is written again.
		long before = settled(proxy);
		Map<String, Lease> renewed = store.renewAll(leases, RENEWED, TIMEOUT);
		assertThat(renewed.keySet()).containsExactlyElementsOf(groups);
		assertThat(settled(proxy) - before).as("requests to renew 300 leases, writing").isEqualTo(1);
		leases = asRenewed(leases, renewed);
		before = settled(proxy);
		List<Lease> withoutHolder = new ArrayList<>(leases);
		withoutHolder.add(new Lease(groups.get(0), null, leases.get(0).term(), LIVE, Duration.ZERO));
		assertThat(store.renewAll(withoutHolder, RENEWED, TIMEOUT).keySet()).containsExactlyElementsOf(groups);
		assertThat(settled(proxy) - before).as("requests to renew 300 leases, checking").isEqualTo(1);
		before = settled(proxy);
		Map<String, Lease> read = store.readAll(groups, TIMEOUT);
		assertThat(settled(proxy) - before).as("requests to read 300 groups").isEqualTo(1);
		for (Lease lease : leases) {
			assertThat(read.get(lease.group()))
				.isEqualTo(new Lease(lease.group(), "a", lease.term(), RENEWED, Duration.ZERO));
		}
		RequestCountingProxy newcomerProxy = countingProxy();
		ZookeeperLeaseStore newcomer = store(client(newcomerProxy.connectString()).usingNamespace("counted"));
		before = settled(newcomerProxy);
		assertThat(newcomer.readAll(groups, TIMEOUT)).isEqualTo(read);
		assertThat(settled(newcomerProxy) - before).as("requests to read 300 groups, first time").isEqualTo(1);
		// Behind the store's back: a group written, a holder's node deleted, a group
		// cleared.
		CuratorFramework admin = client(server.getConnectString()).usingNamespace("counted");
		String written = BASE_PATH + "/" + GroupPaths.encode(groups.get(10));
		admin.setData().forPath(written, admin.getData().forPath(written));
		String deleted = BASE_PATH + "/" + GroupPaths.encode(groups.get(200));
		admin.delete().forPath(deleted + "/" + admin.getChildren().forPath(deleted).get(0));
		newcomer.clear(groups.get(150), TIMEOUT);
		List<String> kept = new ArrayList<>(groups);
		kept.removeAll(List.of(groups.get(10), groups.get(150), groups.get(200)));
		Duration longer = RENEWED.plusSeconds(1);
		before = settled(proxy);
		renewed = store.renewAll(leases, longer, TIMEOUT);
		assertThat(renewed.keySet()).containsExactlyElementsOf(kept);
		assertThat(settled(proxy) - before).as("requests to renew 297 of 300 leases").isEqualTo(3);
		leases = asRenewed(leases, renewed);
		Map<String, Lease> after = newcomer.readAll(groups, TIMEOUT);
		for (String group : kept) {
			assertThat(after.get(group).expiresIn()).isEqualTo(longer);
		}
		assertThat(after.get(groups.get(10)).expiresIn()).isEqualTo(RENEWED);
		assertThat(after.get(groups.get(150)).holder()).isNull();
		assertThat(after.get(groups.get(200)).hasLiveHolder()).isFalse();
		// The store knows them lost now: they are not even sent.
		before = settled(proxy);
		assertThat(store.renewAll(leases, longer, TIMEOUT).keySet()).containsExactlyElementsOf(kept);
		assertThat(settled(proxy) - before).as("requests to renew 297 leases").isEqualTo(1);
		assertThat(store.renew(leases.get(10), longer, TIMEOUT)).isEmpty();
	}

	/**
	 * A candidate queued in 300 groups takes the free ones with two requests: one read of
	 * the groups with its nodes, one multi-operation with the grants. A group that
	 * another candidate takes in between costs two requests more (the failed one and a
	 * read of the groups after it).
	 */
	@Test
	void acquiresThreeHundredGroupsWithTwoRequests() throws Exception {
		RequestCountingProxy proxy = countingProxy();
		ZookeeperLeaseStore store = store(client(proxy.connectString()));
		ZookeeperLeaseStore other = store(client(server.getConnectString()));
		List<String> groups = new ArrayList<>();
		for (int i = 0; i < 300; i++) {
			String group = newGroup();
			groups.add(group);
			store.join(group, "a", TIMEOUT);
		}
		Lease held = other.tryAcquire(groups.get(100), "b", LIVE, TIMEOUT).orElseThrow();
		long before = settled(proxy);
		Map<String, Lease> taken = store.tryAcquireAll(groups, "a", LIVE, TIMEOUT);
		assertThat(settled(proxy) - before).as("requests to take 299 of 300 leases").isEqualTo(2);
		List<String> free = new ArrayList<>(groups);
		free.remove(held.group());
		assertThat(taken.keySet()).containsExactlyElementsOf(free);
		Map<String, Lease> read = other.readAll(groups, TIMEOUT);
		for (String group : free) {
			assertThat(read.get(group).holder()).isEqualTo("a");
			assertThat(read.get(group).term()).isEqualTo(taken.get(group).term());
		}
		assertThat(store.renewAll(taken.values(), LIVE, TIMEOUT).keySet()).containsExactlyElementsOf(free);
		assertThat(read.get(held.group()).holder()).isEqualTo("b");
	}

	/**
	 * A group read once is read again without a request while nothing under it changes; a
	 * grant, a renewal that writes or a queue node that goes makes the next read ask
	 * ZooKeeper for that group alone, and shows the change.
	 */
	@Test
	void readsAgainWithoutRequestsWhatDidNotChange() throws Exception {
		RequestCountingProxy proxy = countingProxy();
		ZookeeperLeaseStore follower = store(client(proxy.connectString()));
		ZookeeperLeaseStore leader = store(client(server.getConnectString()));
		List<String> groups = new ArrayList<>();
		List<Lease> leases = new ArrayList<>();
		for (int i = 0; i < 100; i++) {
			String group = newGroup();
			groups.add(group);
			leases.add(leader.tryAcquire(group, "b", LIVE, TIMEOUT).orElseThrow());
			follower.join(group, "a", TIMEOUT);
		}
		Map<String, Lease> first = follower.readAll(groups, TIMEOUT);
		// Five reads: without what the watch kept, five requests; with it, none (or a
		// ping of the client's own).
		long before = settled(proxy);
		for (int i = 0; i < 5; i++) {
			assertThat(follower.readAll(groups, TIMEOUT)).isEqualTo(first);
		}
		assertThat(settled(proxy) - before).as("requests to read 100 unchanged groups 5 times").isLessThanOrEqualTo(1);
		leader.renew(leases.get(0), RENEWED, TIMEOUT).orElseThrow();
		leader.release(leases.get(1), TIMEOUT);
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
			Map<String, Lease> now = follower.readAll(groups, TIMEOUT);
			assertThat(now.get(groups.get(0)).expiresIn()).isEqualTo(RENEWED);
			assertThat(now.get(groups.get(1)).holder()).isNull();
		});
		before = settled(proxy);
		for (int i = 0; i < 5; i++) {
			assertThat(follower.readAll(groups, TIMEOUT).get(groups.get(2))).isEqualTo(first.get(groups.get(2)));
		}
		assertThat(settled(proxy) - before).as("requests to read 100 groups again 5 times").isLessThanOrEqualTo(1);
		Lease taken = follower.tryAcquire(groups.get(1), "a", LIVE, TIMEOUT).orElseThrow();
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(leader.readAll(groups, TIMEOUT).get(groups.get(1)).term())
				.isEqualTo(taken.term()));
	}

	/**
	 * 3,000 leases, taken and renewed in batches as large as half a packet allows: each
	 * batch holds its members' locks, four a stack frame.
	 */
	@Test
	void takesAndRenewsThreeThousandLeasesInBatchesOfHalfAPacket() throws Exception {
		RequestCountingProxy proxy = countingProxy();
		ZookeeperLeaseStore store = store(client(proxy.connectString()));
		List<String> groups = new ArrayList<>();
		for (int i = 0; i < 3000; i++) {
			groups.add(newGroup());
		}
		Map<String, Lease> taken = store.tryAcquireAll(groups, "a", LIVE, Duration.ofSeconds(60));
		assertThat(taken.keySet()).containsExactlyElementsOf(groups);
		long before = settled(proxy);
		assertThat(store.renewAll(taken.values(), LIVE, TIMEOUT).keySet()).containsExactlyElementsOf(groups);
		// About 1,400 of these a batch (a ping of the client's own may come with them).
		assertThat(settled(proxy) - before).as("requests to renew 3,000 leases").isBetween(3L, 4L);
	}

	/**
	 * A candidate not queued yet in groups that exist is queued in all of them by one
	 * multi-operation of creates, and takes the free ones; a candidate queued after it is
	 * next in line.
	 */
	@Test
	void queuesInManyGroupsWithOneRequestAndTakesTheFreeOnes() throws Exception {
		ZookeeperLeaseStore first = store(client(server.getConnectString()));
		ZookeeperLeaseStore second = store(client(server.getConnectString()));
		List<String> groups = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			String group = newGroup();
			groups.add(group);
			first.join(group, "b", TIMEOUT);
		}
		Lease held = first.tryAcquire(groups.get(7), "b", LIVE, TIMEOUT).orElseThrow();
		first.leave(groups.get(3), "b", TIMEOUT);
		Map<String, Lease> taken = second.tryAcquireAll(groups, "a", LIVE, TIMEOUT);
		List<String> free = new ArrayList<>(groups);
		free.remove(held.group());
		assertThat(taken.keySet()).containsExactlyElementsOf(free);
		for (String group : groups) {
			assertThat(second.participants(group)).contains("a");
		}
		assertThat(second.renewAll(taken.values(), LIVE, TIMEOUT).keySet()).containsExactlyElementsOf(free);
		second.release(taken.get(groups.get(0)), TIMEOUT);
		assertThat(first.tryAcquire(groups.get(0), "b", LIVE, TIMEOUT)).isPresent();
	}

	/**
	 * A join costs a read of the group, the create of the candidate's node and the watch
	 * on the node ahead of it; the candidate is told when that node goes. The first join
	 * of a session also marks the session (see {@link SessionMarks}).
	 */
	@Test
	void joinsWithThreeRequestsAndWatchesTheNodeAhead() throws Exception {
		RequestCountingProxy proxy = countingProxy();
		ZookeeperLeaseStore store = store(client(proxy.connectString()));
		ZookeeperLeaseStore other = store(client(server.getConnectString()));
		store.join(newGroup(), "a", TIMEOUT); // the session's first join, which marks it
		String group = newGroup();
		Lease held = other.tryAcquire(group, "b", LIVE, TIMEOUT).orElseThrow();
		AtomicInteger changes = new AtomicInteger();
		store.watch(group, changes::incrementAndGet);
		long before = settled(proxy);
		store.join(group, "a", TIMEOUT);
		assertThat(settled(proxy) - before).as("requests to join").isEqualTo(3);
		assertThat(store.participants(group)).containsExactly("b", "a");
		int heard = changes.get();
		other.release(held, TIMEOUT);
		await().atMost(Duration.ofSeconds(5)).until(() -> changes.get() > heard);
		assertThat(store.tryAcquire(group, "a", LIVE, TIMEOUT)).isPresent();
	}

	/** Each lease as the renewal handed it out, or as it was where it was refused. */
	private static List<Lease> asRenewed(List<Lease> leases, Map<String, Lease> renewed) {
		return leases.stream().map((lease) -> renewed.getOrDefault(lease.group(), lease)).toList();
	}

	@Test
	void readsSeveralGroupsAsReadReadsEach() throws Exception {
		String held = newGroup();
		String released = newGroup();
		String lostPlace = newGroup();
		String unknown = newGroup();
		CuratorFramework admin = client(server.getConnectString());
		ZookeeperLeaseStore a = store(client(server.getConnectString()));
		ZookeeperLeaseStore b = store(client(server.getConnectString()));
		a.tryAcquire(held, "a", LIVE, TIMEOUT).orElseThrow();
		a.release(a.tryAcquire(released, "a", LIVE, TIMEOUT).orElseThrow(), TIMEOUT);
		a.tryAcquire(lostPlace, "a", LIVE, TIMEOUT).orElseThrow();
		b.join(lostPlace, "b", TIMEOUT);
		// As when b's session ends: its node goes, and b still competes.
		String lostPath = BASE_PATH + "/" + GroupPaths.encode(lostPlace);
		for (String node : admin.getChildren().forPath(lostPath)) {
			if ("b".equals(new String(admin.getData().forPath(lostPath + "/" + node), StandardCharsets.UTF_8))) {
				admin.delete().forPath(lostPath + "/" + node);
			}
		}
		assertThat(a.participants(lostPlace)).containsExactly("a");
		Map<String, Lease> leases = b.readAll(List.of(held, released, lostPlace, unknown, held), TIMEOUT);
		assertThat(leases).containsOnlyKeys(held, released, lostPlace);
		assertThat(leases.get(held)).isEqualTo(read(b, held));
		assertThat(leases.get(held).hasLiveHolder()).isTrue();
		assertThat(leases.get(released)).isEqualTo(read(b, released));
		assertThat(leases.get(released).holder()).isNull();
		assertThat(leases.get(lostPlace).holder()).isEqualTo("a");
		// Reading took b's place again, as a read does.
		assertThat(a.participants(lostPlace)).containsExactly("a", "b");
	}

	/**
	 * An answer larger than the client accepts ({@code jute.maxbuffer}) drops the
	 * connection; the store then splits its batch reads finer, so that the next one
	 * succeeds instead of dropping it again, and keeps sizing them by what it read.
	 */
	@Test
	void splitsBatchReadsFinerAfterAnAnswerTooLargeForTheClient() throws Exception {
		ZKClientConfig config = new ZKClientConfig();
		config.setProperty(ZKClientConfig.JUTE_MAXBUFFER, String.valueOf(16 * 1024));
		CuratorFramework small = CuratorFrameworkFactory.builder()
			.connectString(server.getConnectString())
			.sessionTimeoutMs((int) SESSION_TIMEOUT.toMillis())
			.retryPolicy(new ExponentialBackoffRetry(50, 5, 500))
			.zkClientConfig(config)
			.build();
		this.clients.add(small);
		small.start();
		assertThat(small.blockUntilConnected(30, TimeUnit.SECONDS)).isTrue();
		assertThat(small.getZookeeperClient().getZooKeeper().getClientConfig().getInt(ZKClientConfig.JUTE_MAXBUFFER, 0))
			.isEqualTo(16 * 1024);
		// Eight groups led by h, with 39 candidates more: about 2.6 kB each, twice what
		// the store expects before it has read any, and 21 kB in all.
		CuratorFramework admin = client(server.getConnectString());
		ZookeeperLeaseStore holder = store(client(server.getConnectString()));
		List<String> groups = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			String group = newGroup();
			groups.add(group);
			holder.tryAcquire(group, "h", LIVE, TIMEOUT).orElseThrow();
			for (int candidate = 1; candidate < 40; candidate++) {
				admin.create()
					.withProtection()
					.withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
					.forPath(BASE_PATH + "/" + GroupPaths.encode(group) + "/lease-", ("c" + candidate).getBytes());
			}
		}
		ZookeeperLeaseStore store = store(small);
		assertThatThrownBy(() -> store.readAll(groups, TIMEOUT)).isInstanceOf(LeaderElectionException.class)
			.hasCauseInstanceOf(KeeperException.ConnectionLossException.class);
		await().atMost(Duration.ofSeconds(20))
			.ignoreExceptions()
			.until(() -> store.readAll(groups, TIMEOUT).size() == 8 && small.getZookeeperClient().isConnected());
		for (int i = 0; i < 3; i++) {
			Map<String, Lease> leases = store.readAll(groups, TIMEOUT);
			assertThat(leases).containsOnlyKeys(groups);
			assertThat(leases.values()).allSatisfy((lease) -> {
				assertThat(lease.holder()).isEqualTo("h");
				assertThat(lease.hasLiveHolder()).isTrue();
			});
		}
		assertThat(store.participants(groups.get(0))).hasSize(40).startsWith("h");
	}

	/**
	 * A renewal that writes (a new lease duration) changes the group node's version,
	 * which the lease it hands out carries: the next renewal or release names that one,
	 * and one that names the version before is refused.
	 */
	@Test
	void aRenewalThatWritesHandsOutTheLeaseToUseNext() {
		ZookeeperLeaseStore store = store(client(server.getConnectString()));
		Lease granted = store.tryAcquire(newGroup(), "a", LIVE, TIMEOUT).orElseThrow();
		Lease renewed = store.renew(granted, RENEWED, TIMEOUT).orElseThrow();
		assertThat(renewed.version()).isGreaterThan(granted.version());
		assertThat(renewed.term()).isEqualTo(granted.term());
		Lease checked = store.renew(renewed, RENEWED, TIMEOUT).orElseThrow();
		assertThat(checked.version()).as("a renewal that writes nothing keeps the version")
			.isEqualTo(renewed.version());
		assertThat(store.renew(granted, RENEWED, TIMEOUT)).isEmpty();
		assertThat(read(store, granted.group()).holder()).isEqualTo("a");
	}

	/**
	 * Renewals of one lease alone and of others in batches at once, each renewal writing
	 * (a new lease duration), each naming the lease the last one handed out: they take
	 * turns on the members' locks, and none finds a version changed under it.
	 */
	@Test
	void renewsOneLeaseAloneAndInBatchesAtOnce() throws Exception {
		ZookeeperLeaseStore store = store(client(server.getConnectString()));
		String group = newGroup();
		AtomicReference<Lease> lease = new AtomicReference<>(store.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow());
		List<Lease> others = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			others.add(store.tryAcquire(newGroup(), "a", LIVE, TIMEOUT).orElseThrow());
		}
		AtomicInteger refused = new AtomicInteger();
		Thread alone = new Thread(() -> {
			for (int i = 0; i < 200; i++) {
				Optional<Lease> renewed = store.renew(lease.get(), (i % 2 == 0) ? LIVE : RENEWED, TIMEOUT);
				renewed.ifPresentOrElse(lease::set, refused::incrementAndGet);
			}
		});
		alone.start();
		List<Lease> batch = others;
		for (int i = 0; i < 200; i++) {
			Map<String, Lease> renewed = store.renewAll(batch, (i % 2 == 0) ? RENEWED : LIVE, TIMEOUT);
			if (renewed.size() != batch.size()) {
				refused.incrementAndGet();
			}
			batch = List.copyOf(renewed.values());
		}
		alone.join();
		assertThat(refused).hasValue(0);
		assertThat(store.renew(lease.get(), LIVE, TIMEOUT)).isPresent();
	}

	@Test
	void renewsAndReadsNothingWithoutARequest() throws Exception {
		RequestCountingProxy proxy = countingProxy();
		ZookeeperLeaseStore store = store(client(proxy.connectString()));
		long before = settled(proxy);
		assertThat(store.renewAll(List.of(), LIVE, TIMEOUT).keySet()).isEmpty();
		assertThat(store.renewAll(List.of(new Lease(newGroup(), "a", 1, LIVE, Duration.ZERO)), LIVE, TIMEOUT))
			.isEmpty();
		assertThat(store.readAll(List.of(), TIMEOUT)).isEmpty();
		assertThat(settled(proxy) - before).isZero();
	}

	@Test
	void closeStopsListeningToTheApplicationsClientAndLeavesItOpen() {
		CuratorFramework client = client(server.getConnectString());
		ListenerManager<?, ?> listeners = (ListenerManager<?, ?>) client.getConnectionStateListenable();
		int before = listeners.size();
		ZookeeperLeaseStore store = store(client);
		assertThat(listeners.size()).isEqualTo(before + 1);
		store.close();
		store.close(); // again: nothing more to do
		assertThat(listeners.size()).isEqualTo(before);
		assertThat(client.getState()).isEqualTo(CuratorFrameworkState.STARTED);
		String group = newGroup();
		assertThat(store(client).tryAcquire(group, "a", LIVE, TIMEOUT)).isPresent();
	}

	@Test
	void listsParticipantsInQueueOrder() {
		String group = newGroup();
		ZookeeperLeaseStore a = store(client(server.getConnectString()));
		ZookeeperLeaseStore b = store(client(server.getConnectString()));
		ZookeeperLeaseStore c = store(client(server.getConnectString()));
		Lease lease = a.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		assertThat(b.tryAcquire(group, "b", LIVE, TIMEOUT)).isEmpty();
		assertThat(c.tryAcquire(group, "c", LIVE, TIMEOUT)).isEmpty();
		assertThat(a.participants(group)).containsExactly("a", "b", "c");
		a.release(lease, TIMEOUT);
		assertThat(c.participants(group)).containsExactly("b", "c");
		assertThat(b.tryAcquire(group, "b", LIVE, TIMEOUT)).isPresent();
		assertThat(c.participants(group)).containsExactly("b", "c");
		assertThat(a.participants(newGroup())).isEmpty();
	}

	/**
	 * The lowest node may hold back for balancing (a candidate at its share leaves a
	 * released group to one below its share): the lease must not wait for it.
	 */
	@Test
	void aCandidateBehindTheLowestTakesAFreeLeaseAndTheOthersWait() {
		String group = newGroup();
		ZookeeperLeaseStore a = store(client(server.getConnectString()));
		ZookeeperLeaseStore b = store(client(server.getConnectString()));
		ZookeeperLeaseStore c = store(client(server.getConnectString()));
		Lease lease = a.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		b.join(group, "b", TIMEOUT);
		c.join(group, "c", TIMEOUT);
		assertThat(c.tryAcquire(group, "c", LIVE, TIMEOUT)).as("while a holds it").isEmpty();
		a.release(lease, TIMEOUT);
		Lease taken = c.tryAcquire(group, "c", LIVE, TIMEOUT).orElseThrow();
		assertThat(taken.term()).isGreaterThan(lease.term());
		assertThat(b.tryAcquire(group, "b", LIVE, TIMEOUT)).as("while c holds it").isEmpty();
		assertThat(b.read(group, TIMEOUT).orElseThrow().holder()).isEqualTo("c");
		assertThat(c.participants(group)).as("in queue order").containsExactly("b", "c");
	}

	@Test
	void wakesOnlyTheSuccessorWhenTheHolderLeaves() throws Exception {
		String group = newGroup();
		ZookeeperLeaseStore a = store(client(server.getConnectString()));
		ZookeeperLeaseStore b = store(client(server.getConnectString()));
		ZookeeperLeaseStore c = store(client(server.getConnectString()));
		AtomicInteger bWoken = new AtomicInteger();
		AtomicInteger cWoken = new AtomicInteger();
		Lease lease = a.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		try (AutoCloseable bWatch = b.watch(group, bWoken::incrementAndGet);
				AutoCloseable cWatch = c.watch(group, cWoken::incrementAndGet)) {
			assertThat(b.tryAcquire(group, "b", LIVE, TIMEOUT)).isEmpty();
			assertThat(c.tryAcquire(group, "c", LIVE, TIMEOUT)).isEmpty();
			assertThat(b.read(group, TIMEOUT).orElseThrow().hasLiveHolder()).isTrue();
			assertThat(c.read(group, TIMEOUT).orElseThrow().hasLiveHolder()).isTrue();
			Thread.sleep(200); // let the watches settle
			bWoken.set(0);
			cWoken.set(0);
			a.release(lease, TIMEOUT);
			await().atMost(Duration.ofSeconds(10)).until(() -> bWoken.get() > 0);
			Thread.sleep(300);
			assertThat(cWoken).hasValue(0);
			assertThat(b.tryAcquire(group, "b", LIVE, TIMEOUT)).isPresent();
		}
	}

	@Test
	void queuesAJoinedCandidateAndReadsTheLeaseAsItIs() throws Exception {
		String group = newGroup();
		ZookeeperLeaseStore a = store(client(server.getConnectString()));
		ZookeeperLeaseStore b = store(client(server.getConnectString()));
		AtomicInteger bWoken = new AtomicInteger();
		Lease lease = a.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		try (AutoCloseable watch = b.watch(group, bWoken::incrementAndGet)) {
			b.join(group, "b", TIMEOUT);
			assertThat(a.participants(group)).containsExactly("a", "b");
			assertThat(read(b, group).hasLiveHolder()).isTrue();
			assertThat(read(b, group).isAcquirableBy("b")).isFalse();
			// Queued from the join on, b watches the holder and learns of its release at
			// once.
			bWoken.set(0);
			a.release(lease, TIMEOUT);
			await().atMost(Duration.ofSeconds(10)).until(() -> bWoken.get() > 0);
			assertThat(read(b, group).isAcquirableBy("b")).isTrue();
			Lease taken = b.tryAcquire(group, "b", LIVE, TIMEOUT).orElseThrow();
			// A joined holder that yields queues again at the end.
			b.release(taken, TIMEOUT);
			assertThat(a.participants(group)).containsExactly("b");
			b.leave(group, "b", TIMEOUT);
			await().atMost(Duration.ofSeconds(10)).until(() -> a.participants(group).isEmpty());
		}
	}

	@Test
	void takesALostPlaceAgainAtTheNextReadUntilTheCandidateLeaves() throws Exception {
		String group = newGroup();
		String groupPath = BASE_PATH + "/" + GroupPaths.encode(group);
		CuratorFramework admin = client(server.getConnectString());
		ZookeeperLeaseStore a = store(client(server.getConnectString()));
		ZookeeperLeaseStore b = store(client(server.getConnectString()));
		a.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		b.join(group, "b", TIMEOUT);
		// As when b's session ends: its node goes, and b still competes.
		for (String node : admin.getChildren().forPath(groupPath)) {
			if ("b".equals(new String(admin.getData().forPath(groupPath + "/" + node), StandardCharsets.UTF_8))) {
				admin.delete().forPath(groupPath + "/" + node);
			}
		}
		assertThat(a.participants(group)).containsExactly("a");
		assertThat(read(b, group).hasLiveHolder()).isTrue();
		assertThat(a.participants(group)).containsExactly("a", "b");
		// Once it left, neither a read nor a tryAcquire that was under way queues it.
		b.leave(group, "b", TIMEOUT);
		await().atMost(Duration.ofSeconds(10)).until(() -> a.participants(group).equals(List.of("a")));
		read(b, group);
		assertThat(b.tryAcquire(group, "b", LIVE, TIMEOUT)).isEmpty();
		assertThat(a.participants(group)).containsExactly("a");
	}

	@Test
	void stopsLeadingWhenSuspendedOrKeepsLeadingUntilTheDeadlineWhenAsked() throws Exception {
		String group = newGroup();
		TcpProxy proxy = proxy();
		CuratorFramework client = client(proxy.connectString());
		ZookeeperLeaseStore cautious = store(client);
		ZookeeperLeaseStore keeping = new ZookeeperLeaseStore(client, BASE_PATH, true);
		Lease held = cautious.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		Lease kept = keeping.tryAcquire(newGroup(), "a", LIVE, TIMEOUT).orElseThrow();
		proxy.refuse();
		await().atMost(Duration.ofSeconds(10)).until(() -> !client.getZookeeperClient().isConnected());
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			assertThat(cautious.renew(held, LIVE, TIMEOUT)).isEmpty();
			assertThatThrownBy(() -> keeping.renew(kept, LIVE, TIMEOUT)).hasMessageContaining("SUSPENDED");
		});
		proxy.heal();
		await().atMost(Duration.ofSeconds(20))
			.ignoreExceptions()
			.untilAsserted(() -> assertThat(keeping.renew(kept, LIVE, TIMEOUT)).isPresent());
		// The same session: the node is still queued, so the cautious store re-acquires
		// with a new term.
		assertThat(cautious.renew(held, LIVE, TIMEOUT)).isEmpty();
		assertThat(cautious.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow().term()).isGreaterThan(held.term());
	}

	@Test
	void refusesToGrantWhenTheSessionCouldEndBeforeTheLease() {
		assertThatIllegalStateException()
			.isThrownBy(() -> createStore().tryAcquire(newGroup(), "a", SESSION_TIMEOUT.plusSeconds(1), TIMEOUT))
			.withMessageContaining("session timeout (40000 ms")
			.withMessageContaining("at least the lease duration");
	}

	@Test
	void oldHolderQueuesBehindTheNewOneAfterItsSessionEnded() throws Exception {
		String group = newGroup();
		CuratorFramework holderClient = client(server.getConnectString());
		ZookeeperLeaseStore holder = store(holderClient);
		ZookeeperLeaseStore successor = store(client(server.getConnectString()));
		Lease old = holder.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		assertThat(successor.tryAcquire(group, "b", LIVE, TIMEOUT)).isEmpty();
		ZookeeperTesting.expireSession(holderClient, server.getConnectString());
		Lease lease = successor.tryAcquire(group, "b", LIVE, TIMEOUT).orElseThrow();
		assertThat(lease.activeIn()).isZero();
		assertThat(holder.tryAcquire(group, "a", LIVE, TIMEOUT)).isEmpty();
		assertThat(holder.renew(old, LIVE, TIMEOUT)).isEmpty();
		assertThat(holder.participants(group)).containsExactly("b", "a");
	}

	@Test
	void forgetsTheWaitForAnEarlierHolderOnceTheNewOneRenewedAfterIt() throws Exception {
		String group = newGroup();
		ZookeeperLeaseStore store = createStore();
		store.tryAcquire(group, "a", SHORT, TIMEOUT).orElseThrow();
		store.clear(group, TIMEOUT);
		ZookeeperLeaseStore next = createStore();
		Lease waiting = next.tryAcquire(group, "b", LIVE, TIMEOUT).orElseThrow();
		assertThat(waiting.activeIn()).isEqualTo(SHORT);
		Thread.sleep(SHORT.toMillis() + 100);
		assertThat(next.renew(waiting, LIVE, TIMEOUT)).isPresent();
		next.release(waiting, TIMEOUT);
		assertThat(createStore().tryAcquire(group, "c", LIVE, TIMEOUT).orElseThrow().activeIn()).isZero();
	}

	@Test
	void keepsTermsGrowingWhenZooKeeperLosesTheGroup() throws Exception {
		String group = newGroup();
		String groupPath = BASE_PATH + "/" + GroupPaths.encode(group);
		CuratorFramework client = client(server.getConnectString());
		ZookeeperLeaseStore witness = store(client);
		Lease old = witness.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		Thread.sleep(5); // the group node created again has a later creation time
		client.delete().deletingChildrenIfNeeded().forPath(groupPath);
		assertThat(witness.renew(old, LIVE, TIMEOUT)).isEmpty();
		// A store that never saw the group cannot tell: it acts at once, with a greater
		// term.
		ZookeeperLeaseStore newcomer = store(client(server.getConnectString()));
		Lease fresh = newcomer.tryAcquire(group, "b", LIVE, TIMEOUT).orElseThrow();
		assertThat(fresh.term()).isGreaterThan(old.term());
		assertThat(fresh.activeIn()).isZero();
		newcomer.release(fresh, TIMEOUT);
		Thread.sleep(5);
		client.delete().deletingChildrenIfNeeded().forPath(groupPath);
		// One that saw it granted waits a lease, as the last holder may still believe.
		Lease cautious = witness.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		assertThat(cautious.term()).isGreaterThan(fresh.term());
		assertThat(cautious.activeIn()).isEqualTo(LIVE);
	}

	@Test
	void acceptsPlainBasePaths() {
		assertThat(createStoreWithIdentifier("/leader-election/app_1.v2")).isNotNull();
		assertThatThrownBy(() -> createStoreWithIdentifier("/zookeeper/x"))
			.isInstanceOf(IllegalArgumentException.class);
		assertThatThrownBy(() -> createStoreWithIdentifier("/a/..")).hasMessageContaining("must match ^");
		assertThatThrownBy(() -> createStoreWithIdentifier("/a/")).hasMessageContaining("must match ^");
	}

	/**
	 * Expires the client's session, for tests that the kit declares without checked
	 * exceptions.
	 */
	private static void expireSession(CuratorFramework client) {
		try {
			ZookeeperTesting.expireSession(client, server.getConnectString());
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
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

	/**
	 * The packets sent once the client has sent nothing for a while: a watch that a call
	 * set in the background may leave after the call returned.
	 */
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

	private RequestCountingProxy countingProxy() throws Exception {
		RequestCountingProxy proxy = new RequestCountingProxy(server.getPort());
		this.countingProxies.add(proxy);
		return proxy;
	}

	private TcpProxy proxy() throws Exception {
		TcpProxy proxy = new TcpProxy(server.getPort());
		this.proxies.add(proxy);
		return proxy;
	}

	private static ZookeeperLeaseStore store(CuratorFramework client) {
		return new ZookeeperLeaseStore(client, BASE_PATH, false);
	}

	private static Lease read(LeaseStore store, String group) {
		return store.read(group, TIMEOUT).orElseThrow();
	}

	private static void awaitExpiry(LeaseStore store, String group) {
		await().atMost(Duration.ofSeconds(10)).until(() -> read(store, group).isExpired());
	}

	private static String newGroup() {
		return "group-" + UUID.randomUUID();
	}

}
