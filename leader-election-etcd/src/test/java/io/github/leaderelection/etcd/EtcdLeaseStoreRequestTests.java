package io.github.leaderelection.etcd;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.testing.EtcdServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The requests that batch renewals and reads cost, counted by etcd itself: the gRPC calls
 * its {@code /metrics} endpoint says it handled, per method. The member is this class's
 * own (an etcd shared with other tests would count their requests too), and each check
 * waits until the counters have settled on the expected figures and stay there.
 */
@Order(1)
class EtcdLeaseStoreRequestTests {

	private static final Logger logger = LoggerFactory.getLogger(EtcdLeaseStoreRequestTests.class);

	private static final Pattern COUNTER = Pattern.compile(
			"^(grpc_server_handled_total|grpc_server_msg_received_total)\\{.*grpc_method=\"([^\"]+)\".*\\} (\\S+)$");

	private static final String HANDLED = "grpc_server_handled_total";

	private static final String RECEIVED = "grpc_server_msg_received_total";

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private static final int GROUPS = 300;

	private static EtcdServer etcd;

	private static Client client;

	@BeforeAll
	static void startEtcd() throws Exception {
		etcd = new EtcdServer(Path.of("target/etcd/requests"));
		etcd.start();
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

	@Test
	void renewsAndReadsThreeHundredGroupsInOneTransactionPer128AndOneKeepAlive() throws Exception {
		EtcdLeaseStore store = new EtcdLeaseStore(client, "requests");
		List<Lease> leases = new ArrayList<>();
		for (int i = 0; i < GROUPS; i++) {
			leases.add(store.tryAcquire("group-" + i, "a", LEASE, TIMEOUT).orElseThrow());
		}
		Lease released = leases.get(GROUPS / 2);
		store.release(released, TIMEOUT);
		List<String> groups = leases.stream().map(Lease::group).toList();

		// 300 records in 3 transactions (128 + 128 + 44); the 299 leases still held
		// share one etcd lease, refreshed by one keep-alive; nothing else.
		assertRequests(() -> store.renewAll(leases, LEASE, TIMEOUT).size(), 299,
				Map.of("Txn", 3L, "LeaseKeepAlive", 1L));

		List<String> withUnknown = new ArrayList<>(groups);
		withUnknown.add("never-led");
		assertRequests(() -> store.readAll(withUnknown, TIMEOUT).size(), GROUPS, Map.of("Txn", 3L));
		assertRequests(() -> store.readAll(groups.subList(0, 128), TIMEOUT).size(), 128, Map.of("Txn", 1L));
		assertRequests(() -> store.readAll(groups.subList(0, 129), TIMEOUT).size(), 129, Map.of("Txn", 2L));
		assertRequests(() -> store.readAll(List.of(), TIMEOUT).size(), 0, Map.of());
		assertRequests(() -> store.renewAll(List.of(), LEASE, TIMEOUT).size(), 0, Map.of());

		// For comparison: one group on its own, a read and a keep-alive.
		assertRequests(() -> store.renew(leases.get(0), LEASE, TIMEOUT).isPresent() ? 1 : 0, 1,
				Map.of("Range", 1L, "LeaseKeepAlive", 1L));
	}

	/**
	 * Thousands of groups: their keys read a page of the namespace at a time (32,768
	 * keys, two per group), not one range each in transactions of 128, which would take
	 * 20 transactions per read of 2,500 groups (79 at 10,000).
	 */
	@Test
	void readsRenewsAndAcquiresThousandsOfGroupsByPagesOfTheNamespace() throws Exception {
		EtcdLeaseStore store = new EtcdLeaseStore(client, "requests-pages");
		List<String> groups = groups(2500);
		// A first grant for this candidate: its etcd lease, one page that finds no key,
		// then the grants, 64 to a transaction.
		Map<String, Lease> taken = new HashMap<>();
		assertRequests(() -> {
			taken.putAll(store.tryAcquireAll(groups, "a", LEASE, TIMEOUT));
			return taken.size();
		}, groups.size(), Map.of("LeaseGrant", 1L, "Range", 1L, "Txn", 40L));

		// 5,000 keys: one page, and one keep-alive of the etcd lease they share.
		assertRequests(() -> store.renewAll(taken.values(), LEASE, TIMEOUT).size(), groups.size(),
				Map.of("Range", 1L, "LeaseKeepAlive", 1L));
		assertRequests(() -> store.readAll(groups, TIMEOUT).size(), groups.size(), Map.of("Range", 1L));

		// Up to 512 groups, transactions of 128 ranges; above, the namespace's pages.
		assertRequests(() -> store.readAll(groups.subList(0, 512), TIMEOUT).size(), 512, Map.of("Txn", 4L));
		assertRequests(() -> store.readAll(groups.subList(0, 513), TIMEOUT).size(), 513, Map.of("Range", 1L));
		assertThat(store.readAll(groups.subList(0, 513), TIMEOUT)).allSatisfy((group, lease) -> {
			assertThat(lease.holder()).isEqualTo("a");
			assertThat(lease.term()).isEqualTo(taken.get(group).term());
		});

		// A client that accepts answers of 100 kB at most (gRPC's default is 4 MB): the
		// pages are halved until one fits, here 1,024 keys, and the answer is the same.
		try (Client small = Client.builder().endpoints(etcd.endpoint()).maxInboundMessageSize(100_000).build()) {
			EtcdLeaseStore reader = new EtcdLeaseStore(small, "requests-pages");
			Map<String, Lease> read = reader.readAll(groups, TIMEOUT);
			assertThat(read).hasSize(groups.size()).allSatisfy((group, lease) -> {
				assertThat(lease.holder()).isEqualTo("a");
				assertThat(lease.term()).isEqualTo(taken.get(group).term());
			});
			assertRequests(() -> reader.readAll(groups, TIMEOUT).size(), groups.size(), Map.of("Range", 5L));
		}
	}

	@Test
	void keepsAliveOnlyTheLeasesItStillHolds() throws Exception {
		EtcdLeaseStore store = new EtcdLeaseStore(client, "requests-held");
		EtcdLeaseStore other = new EtcdLeaseStore(client, "requests-held");
		List<Lease> leases = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			leases.add(store.tryAcquire("group-" + i, "a", LEASE, TIMEOUT).orElseThrow());
		}
		other.forceLeader("group-0", "b", TIMEOUT);
		other.clear("group-1", TIMEOUT);
		store.release(leases.get(2), TIMEOUT);
		List<Lease> renewed = new ArrayList<>(leases);
		renewed.add(new Lease("group-5", "a", 1, LEASE, Duration.ZERO)); // never led
		renewed.add(new Lease("group-3", null, leases.get(3).term(), LEASE, Duration.ZERO)); // nobody

		// The records of the six leases that name a holder in one transaction; one
		// keep-alive, of the etcd lease that group-3 and group-4 share.
		assertRequests(() -> store.renewAll(renewed, LEASE, TIMEOUT).size(), 2,
				Map.of("Txn", 1L, "LeaseKeepAlive", 1L));
	}

	/**
	 * Many groups taken at once: their keys read in transactions of 128 ranges, their
	 * grants written 64 to a transaction (two writes each), all on one etcd lease.
	 */
	@Test
	void acquiresThreeHundredGroupsInFiveTransactionsAfterTheReads() throws Exception {
		EtcdLeaseStore store = new EtcdLeaseStore(client, "requests-acquire");
		List<String> groups = groups(GROUPS);
		// A first grant for this candidate: its etcd lease, then 3 reads and 5 writes.
		assertRequests(() -> store.tryAcquireAll(groups, "a", LEASE, TIMEOUT).size(), GROUPS,
				Map.of("LeaseGrant", 1L, "Txn", 8L));
		// Nothing to take: the reads only.
		assertRequests(() -> store.tryAcquireAll(groups, "b", LEASE, TIMEOUT).size(), 0, Map.of("Txn", 3L));
	}

	/**
	 * Another candidate took one of the groups between the read and the grants: the
	 * transaction of its 64 is refused and answers with their records, and the 63 still
	 * as read are written together once more, not each on its own (65 transactions).
	 */
	@Test
	void writesTheGrantsOfARefusedTransactionThatWereNotTakenTogetherOnceMore() throws Exception {
		EtcdLeaseStore store = new EtcdLeaseStore(client, "requests-refused");
		EtcdLeaseStore other = new EtcdLeaseStore(client, "requests-refused");
		List<String> groups = groups(GROUPS);
		assertThat(store.readAll(groups, TIMEOUT)).isEmpty();
		other.tryAcquire("group-5", "b", LEASE, TIMEOUT).orElseThrow();
		// The reads just made stand for this call's: its etcd lease, the 5 transactions
		// of
		// the grants, and one more for the 63 of the refused one.
		assertRequests(() -> store.tryAcquireAll(groups, "a", LEASE, TIMEOUT).size(), GROUPS - 1,
				Map.of("LeaseGrant", 1L, "Txn", 6L));
		assertThat(store.read("group-5", TIMEOUT))
			.hasValueSatisfying((lease) -> assertThat(lease.holder()).isEqualTo("b"));
	}

	/**
	 * A candidate that held many groups stopped renewing them (cut off, paused, killed),
	 * and its etcd lease ran out: another takes them over asking the time left on that
	 * etcd lease once, not once per group. Asked once per group, one after the other, the
	 * round trips of 100 groups outlast a call timeout of the retry period, and the batch
	 * fails every round until the old holder releases them.
	 */
	@Test
	void takesOverTheGroupsOfAnExpiredEtcdLeaseAskingItsTimeToLiveOnce() throws Exception {
		EtcdLeaseStore holder = new EtcdLeaseStore(client, "requests-takeover");
		List<String> groups = groups(100);
		Duration brief = Duration.ofSeconds(2);
		assertThat(holder.tryAcquireAll(groups, "a", brief, TIMEOUT)).hasSize(100);
		// Never renewed: etcd ends the etcd lease, and with it the lease keys.
		await().atMost(Duration.ofSeconds(15))
			.until(() -> client.getKVClient()
				.get(EtcdLeaseStore.bytes("requests-takeover/groups/"), GetOption.builder().isPrefix(true).build())
				.get()
				.getKvs()
				.stream()
				.noneMatch((keyValue) -> keyValue.getKey().toString(StandardCharsets.UTF_8).endsWith("/lease")));
		EtcdLeaseStore follower = new EtcdLeaseStore(client, "requests-takeover");
		// The keys read in one transaction, the time left on the holder's etcd lease
		// (gone), the follower's etcd lease, and the grants 64 to a transaction.
		assertRequests(() -> follower.tryAcquireAll(groups, "b", brief, TIMEOUT).size(), 100,
				Map.of("Txn", 3L, "LeaseTimeToLive", 1L, "LeaseGrant", 1L));
	}

	/**
	 * Groups cleared away from a holder whose etcd lease lives: the new holder waits that
	 * lease out, on a fence (a timer lease) granted once for all the groups of the call,
	 * not once per group.
	 */
	@Test
	void takesOverGroupsClearedAwayFromALiveEtcdLeaseOnOneFence() throws Exception {
		EtcdLeaseStore holder = new EtcdLeaseStore(client, "requests-fence");
		List<String> groups = groups(100);
		assertThat(holder.tryAcquireAll(groups, "a", LEASE, TIMEOUT)).hasSize(100);
		groups.forEach((group) -> holder.clear(group, TIMEOUT));
		EtcdLeaseStore follower = new EtcdLeaseStore(client, "requests-fence");
		// The keys read in one transaction, one fence, the follower's etcd lease, and
		// the grants 64 to a transaction.
		AtomicReference<Map<String, Lease>> taken = new AtomicReference<>();
		assertRequests(() -> {
			taken.set(follower.tryAcquireAll(groups, "b", LEASE, TIMEOUT));
			return taken.get().size();
		}, 100, Map.of("Txn", 3L, "LeaseGrant", 2L));
		// Each waits out the holder's etcd lease, whose TTL is the lease duration.
		assertThat(taken.get().values())
			.allSatisfy((lease) -> assertThat(lease.activeIn()).isGreaterThan(LEASE.minusSeconds(5)));
	}

	/**
	 * A follower's first grant goes on an etcd lease that its reads granted ahead of
	 * time, of the TTL of the leases they found: a handover waits for no lease grant.
	 */
	@Test
	void grantsAFollowersFirstLeaseOnAnEtcdLeaseItsReadsKeptReady() throws Exception {
		EtcdLeaseStore leader = new EtcdLeaseStore(client, "requests-spare");
		EtcdLeaseStore follower = new EtcdLeaseStore(client, "requests-spare");
		Lease lease = leader.tryAcquire("group", "a", LEASE, TIMEOUT).orElseThrow();
		// The first read grants the spare and refreshes it once (which warms up
		// jetcd's keep-alives).
		assertRequests(() -> follower.readAll(List.of("group"), TIMEOUT).size(), 1,
				Map.of("Txn", 1L, "LeaseGrant", 1L, "LeaseKeepAlive", 1L));
		assertRequests(() -> follower.readAll(List.of("group"), TIMEOUT).size(), 1, Map.of("Txn", 1L));
		leader.release(lease, TIMEOUT);
		// The group's keys, then the grant's transaction with a keep-alive of the spare.
		assertRequests(() -> follower.tryAcquire("group", "b", LEASE, TIMEOUT).isPresent(), true,
				Map.of("Range", 1L, "Txn", 1L, "LeaseKeepAlive", 1L));
	}

	/**
	 * A graceful handover costs three requests: the holder's release, a transaction
	 * compared on the record it wrote (no read first), and the follower's grant with a
	 * keep-alive of its spare, on what the watch told it of the release (no read either).
	 */
	@Test
	void handsOverInOneTransactionEachWayAndAKeepAlive() throws Exception {
		EtcdLeaseStore leader = new EtcdLeaseStore(client, "requests-handover");
		EtcdLeaseStore follower = new EtcdLeaseStore(client, "requests-handover");
		Lease lease = leader.tryAcquire("group", "a", LEASE, TIMEOUT).orElseThrow();
		AtomicInteger changes = new AtomicInteger();
		try (AutoCloseable watch = follower.watch("group", changes::incrementAndGet)) {
			assertThat(follower.readAll(List.of("group"), TIMEOUT)).containsKey("group");
			assertRequests(() -> {
				leader.release(lease, TIMEOUT);
				return 0;
			}, 0, Map.of("Txn", 1L));
			await().atMost(Duration.ofSeconds(10)).until(() -> changes.get() > 0);
			// The engine reads the group the moment the watch tells it of a change, then
			// takes it if it found it free.
			assertRequests(() -> {
				Lease free = follower.read("group", TIMEOUT).orElseThrow();
				return free.holder() == null && free.term() == lease.term()
						&& follower.tryAcquire("group", "b", LEASE, TIMEOUT).isPresent();
			}, true, Map.of("Txn", 1L, "LeaseKeepAlive", 1L));
		}
	}

	/**
	 * A candidate's entry costs a keep-alive and a range read per call once announced,
	 * sent at once; a first call, a lease that ran out, a new TTL or an entry that
	 * changed cost a write (a transaction that also reads the list) and, for a new lease,
	 * a grant.
	 */
	@Test
	void keepsACandidateAliveWithAKeepAliveAndARangeRead() throws Exception {
		EtcdLeaseStore store = new EtcdLeaseStore(client, "requests-candidates");
		EtcdLeaseStore other = new EtcdLeaseStore(client, "requests-candidates");
		Map<String, Integer> a = Map.of("a", 1);
		assertRequests(() -> store.keepCandidateAlive("a", 1, LEASE, TIMEOUT), a, Map.of("LeaseGrant", 1L, "Txn", 1L));
		assertRequests(() -> store.keepCandidateAlive("a", 1, LEASE, TIMEOUT), a,
				Map.of("LeaseKeepAlive", 1L, "Range", 1L));
		assertRequests(() -> store.keepCandidateAlive("a", 1, LEASE, TIMEOUT), a,
				Map.of("LeaseKeepAlive", 1L, "Range", 1L));
		// Another weight: the entry is written again, on the same lease.
		assertRequests(() -> store.keepCandidateAlive("a", 2, LEASE, TIMEOUT), Map.of("a", 2),
				Map.of("LeaseKeepAlive", 1L, "Range", 1L, "Txn", 1L));
		// Another TTL: a new lease, and the old one revoked once the key left it.
		assertRequests(() -> store.keepCandidateAlive("a", 2, LEASE.plusSeconds(1), TIMEOUT), Map.of("a", 2),
				Map.of("LeaseGrant", 1L, "Txn", 1L, "LeaseRevoke", 1L));
		assertRequests(() -> other.keepCandidateAlive("b", 1, LEASE, TIMEOUT), Map.of("a", 2, "b", 1),
				Map.of("LeaseGrant", 1L, "Txn", 1L));
		// A store that did not announce a candidate deletes its key; the candidate's own
		// store writes it again at its next call.
		assertRequests(() -> {
			other.removeCandidate("a", TIMEOUT);
			return 0;
		}, 0, Map.of("DeleteRange", 1L));
		assertRequests(() -> store.keepCandidateAlive("a", 2, LEASE.plusSeconds(1), TIMEOUT), Map.of("a", 2, "b", 1),
				Map.of("LeaseKeepAlive", 1L, "Range", 1L, "Txn", 1L));
		// Its own store revokes its lease, which takes the key with it.
		assertRequests(() -> {
			store.removeCandidate("a", TIMEOUT);
			return other.keepCandidateAlive("b", 1, LEASE, TIMEOUT);
		}, Map.of("b", 1), Map.of("LeaseRevoke", 1L, "LeaseKeepAlive", 1L, "Range", 1L));
		// A lease that ran out: found gone by the keep-alive, then a new one.
		Duration brief = Duration.ofSeconds(1);
		store.keepCandidateAlive("c", 1, brief, TIMEOUT);
		await().atMost(Duration.ofSeconds(10))
			.until(() -> !other.keepCandidateAlive("b", 1, LEASE, TIMEOUT).containsKey("c"));
		assertRequests(() -> store.keepCandidateAlive("c", 1, brief, TIMEOUT), Map.of("b", 1, "c", 1),
				Map.of("LeaseKeepAlive", 1L, "Range", 1L, "LeaseGrant", 1L, "Txn", 1L));
	}

	/** {@code group-0} to {@code group-<count - 1>}. */
	private static List<String> groups(int count) {
		List<String> groups = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			groups.add("group-" + i);
		}
		return groups;
	}

	/**
	 * Waits until etcd is quiet (what the setup sent without waiting, a lease's revoke,
	 * has been handled), runs the action, checks its answer, then waits until the gRPC
	 * calls etcd handled since are the expected ones, per method, and stay so for a while
	 * (a keep-alive stream is counted when it closes, shortly after its answer).
	 */
	private static <T> void assertRequests(Supplier<T> action, T expectedAnswer, Map<String, Long> expected)
			throws IOException {
		AtomicReference<Map<String, Long>> quiet = new AtomicReference<>(counters(HANDLED));
		await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(300)).until(() -> {
			Map<String, Long> now = counters(HANDLED);
			return now.equals(quiet.getAndSet(now));
		});
		Map<String, Long> before = quiet.get();
		Map<String, Long> messagesBefore = counters(RECEIVED);
		long start = System.nanoTime();
		assertThat(action.get()).isEqualTo(expectedAnswer);
		long millis = Duration.ofNanos(System.nanoTime() - start).toMillis();
		await().atMost(Duration.ofSeconds(15))
			.during(Duration.ofMillis(500))
			.until(() -> since(before, HANDLED), expected::equals);
		logger.info("Requests handled: {}; messages received: {}; call took {} ms", since(before, HANDLED),
				since(messagesBefore, RECEIVED), millis);
	}

	private static Map<String, Long> since(Map<String, Long> before, String counter) throws IOException {
		Map<String, Long> delta = new TreeMap<>();
		counters(counter).forEach((method, value) -> {
			long change = value - before.getOrDefault(method, 0L);
			if (change != 0) {
				delta.put(method, change);
			}
		});
		return delta;
	}

	/** A counter of etcd's, per gRPC method (summed over result codes). */
	private static Map<String, Long> counters(String counter) throws IOException {
		Map<String, Long> values = new HashMap<>();
		HttpURLConnection connection = (HttpURLConnection) URI.create(etcd.endpoint() + "/metrics")
			.toURL()
			.openConnection();
		try (BufferedReader in = new BufferedReader(
				new InputStreamReader(connection.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = in.readLine()) != null) {
				Matcher matcher = COUNTER.matcher(line);
				if (matcher.matches() && matcher.group(1).equals(counter)) {
					values.merge(matcher.group(2), (long) Double.parseDouble(matcher.group(3)), Long::sum);
				}
			}
		}
		finally {
			connection.disconnect();
		}
		assertThat(values).as("etcd's %s counters", counter).isNotEmpty();
		return values;
	}

}
