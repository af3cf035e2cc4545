package io.github.leaderelection.etcd;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.DeleteOption;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.test.store.LeaseStoreContractTests;
import io.github.leaderelection.testing.TestEtcd;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Contract tests for {@link EtcdLeaseStore} on an etcd member of the test's own. Each
 * store stands for another node: each has a client of its own, and its own memory of seen
 * terms.
 */
@Order(4)
class EtcdLeaseStoreTests extends LeaseStoreContractTests {

	/**
	 * A namespace per run: an etcd given by the environment may hold earlier runs' keys.
	 */
	private static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	private static TestEtcd etcd;

	private static Client client;

	@BeforeAll
	static void startEtcd() throws Exception {
		etcd = TestEtcd.start(Path.of("target/etcd/contract"));
		client = Client.builder().endpoints(etcd.endpoint()).build();
	}

	@AfterAll
	static void stopEtcd() throws Exception {
		if (client != null) {
			client.close();
		}
		if (etcd != null) {
			etcd.close();
		}
	}

	@Override
	protected EtcdLeaseStore createStore() {
		return new EtcdLeaseStore(client, "contract-tests-" + RUN);
	}

	@Override
	protected LeaseStore createStoreWithIdentifier(String unsafeIdentifier) {
		return new EtcdLeaseStore(client, unsafeIdentifier);
	}

	@Test
	void neverRenewsALeaseThatNamesNobody() {
		EtcdLeaseStore store = createStore();
		String group = newGroup();
		Lease lease = store.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		store.release(lease, TIMEOUT);
		Lease nobody = new Lease(group, null, lease.term(), LIVE, Duration.ZERO);
		assertThat(store.renew(nobody, RENEWED, TIMEOUT)).isEmpty();
		assertThat(store.renewAll(List.of(nobody), RENEWED, TIMEOUT).keySet()).isEmpty();
		// No etcd lease was granted to nobody: the group stays free.
		assertThat(store.read(group, TIMEOUT).orElseThrow().isExpired()).isTrue();
	}

	@Test
	void readsAndRenewsInOneCallLeasesThatExpiredWhileNobodyTookThem() {
		EtcdLeaseStore store = createStore();
		List<String> groups = List.of(newGroup(), newGroup(), newGroup());
		List<Lease> leases = List.of(store.tryAcquire(groups.get(0), "a", SHORT, TIMEOUT).orElseThrow(),
				store.tryAcquire(groups.get(1), "a", SHORT, TIMEOUT).orElseThrow(),
				store.tryAcquire(groups.get(2), "a", LIVE, TIMEOUT).orElseThrow());
		await().atMost(Duration.ofSeconds(10))
			.until(() -> store.read(groups.get(0), TIMEOUT).orElseThrow().isExpired()
					&& store.read(groups.get(1), TIMEOUT).orElseThrow().isExpired());
		// Each group read in one call exactly as a read of its own reads it.
		Map<String, Lease> read = createStore().readAll(groups, TIMEOUT);
		for (String group : groups) {
			assertThat(read.get(group)).isEqualTo(store.read(group, TIMEOUT).orElseThrow());
		}
		assertThat(read.get(groups.get(0)).isExpired()).isTrue();
		assertThat(read.get(groups.get(2)).hasLiveHolder()).isTrue();
		// Two etcd leases gone, one of another duration: each replaced by a new one.
		assertThat(store.renewAll(leases, RENEWED, TIMEOUT).keySet()).containsExactlyElementsOf(groups);
		for (Lease lease : leases) {
			Lease current = store.read(lease.group(), TIMEOUT).orElseThrow();
			assertThat(current.hasLiveHolder()).isTrue();
			assertThat(current.term()).isEqualTo(lease.term());
			assertThat(createStore().tryAcquire(lease.group(), "b", LIVE, TIMEOUT)).isEmpty();
		}
	}

	@Test
	void remembersTheTermsItReadsInOneCallAsAReadDoes() throws Exception {
		String group = newGroup();
		Lease lease = createStore().tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		EtcdLeaseStore reader = createStore();
		assertThat(reader.readAll(List.of(group), TIMEOUT)).containsOnlyKeys(group);
		// etcd loses the group's keys, as a cluster rebuilt on empty data directories
		// does.
		client.getKVClient()
			.delete(EtcdLeaseStore.bytes("contract-tests-" + RUN + "/groups/" + group + "/"),
					DeleteOption.builder().isPrefix(true).build())
			.get();
		Lease taken = reader.tryAcquire(group, "b", LIVE, TIMEOUT).orElseThrow();
		assertThat(taken.term()).isGreaterThan(lease.term());
		assertThat(taken.activeIn()).isGreaterThanOrEqualTo(LIVE);
	}

	/**
	 * A grant goes out on what the store's last read found, which can be out of date by
	 * the time it is written: it is then judged on a fresh read, never on the old one.
	 */
	@Test
	void judgesAGrantOnAFreshReadWhenItsLastReadIsOutOfDate() {
		EtcdLeaseStore store = createStore();
		EtcdLeaseStore other = createStore();
		String taken = newGroup();
		assertThat(store.read(taken, TIMEOUT)).isEmpty();
		Lease othersLease = other.tryAcquire(taken, "b", LIVE, TIMEOUT).orElseThrow();
		assertThat(store.tryAcquire(taken, "a", LIVE, TIMEOUT)).isEmpty();
		assertThat(other.renew(othersLease, LIVE, TIMEOUT)).isPresent();
		String released = newGroup();
		Lease before = other.tryAcquire(released, "b", LIVE, TIMEOUT).orElseThrow();
		assertThat(store.readAll(List.of(released), TIMEOUT).get(released).hasLiveHolder()).isTrue();
		other.release(before, TIMEOUT);
		Lease after = store.tryAcquire(released, "a", LIVE, TIMEOUT).orElseThrow();
		assertThat(after.term()).isGreaterThan(before.term());
		assertThat(after.activeIn()).isZero();
	}

	/**
	 * A candidate's groups share one etcd lease, which its renewals keep alive. A group
	 * it no longer renews must not live on with the others: one forced away to a
	 * candidate that never comes, one dropped without a release. Each one's key is
	 * deleted once its holder has not renewed it for the lease's TTL, and another
	 * candidate takes it; the group still renewed keeps its term.
	 */
	@Test
	void aGroupItsHolderNoLongerRenewsEndsWhileTheGroupsItRenewsLiveOn() throws Exception {
		EtcdLeaseStore store = createStore();
		EtcdLeaseStore other = createStore();
		Duration lease = Duration.ofSeconds(1);
		String kept = newGroup();
		String forced = newGroup();
		String dropped = newGroup();
		Lease keptLease = store.tryAcquire(kept, "a", lease, TIMEOUT).orElseThrow();
		Lease forcedLease = store.tryAcquire(forced, "a", lease, TIMEOUT).orElseThrow();
		store.tryAcquire(dropped, "a", lease, TIMEOUT).orElseThrow();
		other.forceLeader(forced, "never-comes", TIMEOUT);
		assertThat(other.tryAcquire(dropped, "c", LIVE, TIMEOUT)).isEmpty();
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		boolean forcedTaken = false;
		boolean droppedTaken = false;
		while (!(forcedTaken && droppedTaken)) {
			assertThat(System.nanoTime()).as("both groups taken by another candidate in time").isLessThan(deadline);
			// As its engine would: every 300 ms, what it still believes it leads.
			assertThat(store.renewAll(List.of(keptLease, forcedLease), lease, TIMEOUT).keySet()).containsExactly(kept);
			forcedTaken = forcedTaken || other.tryAcquire(forced, "c", LIVE, TIMEOUT).isPresent();
			droppedTaken = droppedTaken || other.tryAcquire(dropped, "c", LIVE, TIMEOUT).isPresent();
			Thread.sleep(300);
		}
		Lease stillKept = store.read(kept, TIMEOUT).orElseThrow();
		assertThat(stillKept.hasLiveHolder()).isTrue();
		assertThat(stillKept.holder()).isEqualTo("a");
		assertThat(stillKept.term()).isEqualTo(keptLease.term());
	}

	/**
	 * A group its holder dropped without a release (its engine stepped down while the
	 * store was out of reach, then took other groups on the same etcd lease, which its
	 * renewals keep alive): once no belief covers it, the holder's store releases it, and
	 * another candidate takes it at once, without waiting that etcd lease out.
	 */
	@Test
	void aGroupItsHolderNoLongerRenewsIsTakenWithoutWaitingOutTheSharedEtcdLease() throws Exception {
		EtcdLeaseStore store = createStore();
		EtcdLeaseStore other = createStore();
		Duration lease = Duration.ofSeconds(2);
		String kept = newGroup();
		String dropped = newGroup();
		Lease keptLease = store.tryAcquire(kept, "a", lease, TIMEOUT).orElseThrow();
		Lease droppedLease = store.tryAcquire(dropped, "a", lease, TIMEOUT).orElseThrow();
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		do {
			assertThat(System.nanoTime()).as("the dropped group free in time").isLessThan(deadline);
			// As its engine would: every 300 ms, what it still believes it leads.
			assertThat(store.renewAll(List.of(keptLease), lease, TIMEOUT).keySet()).containsExactly(kept);
			Thread.sleep(300);
		}
		while (!other.read(dropped, TIMEOUT).orElseThrow().isExpired());
		Lease taken = other.tryAcquire(dropped, "c", LIVE, TIMEOUT).orElseThrow();
		assertThat(taken.term()).isGreaterThan(droppedLease.term());
		assertThat(taken.activeIn()).isZero();
		assertThat(store.read(kept, TIMEOUT).orElseThrow().holder()).isEqualTo("a");
	}

	/**
	 * A candidate's entry lasts its TTL by etcd's clock from the last call that kept it
	 * alive, and no longer: nothing keeps it alive in the background. The second call
	 * refreshes the etcd lease, so the entry outlives the first call's TTL.
	 */
	@Test
	void dropsACandidateWhoseStoreStopsCallingOnceItsTtlRunsOut() throws Exception {
		Duration ttl = Duration.ofSeconds(2);
		String candidate = newGroup();
		EtcdLeaseStore stopping = createStore();
		EtcdLeaseStore observer = createStore();
		String self = newGroup();
		assertThat(stopping.keepCandidateAlive(candidate, 2, ttl, TIMEOUT)).containsEntry(candidate, 2);
		Thread.sleep(1500);
		long lastCall = System.nanoTime();
		assertThat(stopping.keepCandidateAlive(candidate, 2, ttl, TIMEOUT)).containsEntry(candidate, 2);
		assertThat(observer.keepCandidateAlive(self, 1, LIVE, TIMEOUT)).containsEntry(candidate, 2);
		await().atMost(ttl.plusSeconds(5))
			.pollInterval(Duration.ofMillis(100))
			.until(() -> !observer.keepCandidateAlive(self, 1, LIVE, TIMEOUT).containsKey(candidate));
		// The read that no longer found it was answered after etcd had let it run out.
		assertThat(Duration.ofNanos(System.nanoTime() - lastCall)).isGreaterThanOrEqualTo(ttl);
		observer.removeCandidate(self, TIMEOUT);
	}

	private static String newGroup() {
		return "group-" + UUID.randomUUID();
	}

}
