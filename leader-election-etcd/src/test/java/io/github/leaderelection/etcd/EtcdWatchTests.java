package io.github.leaderelection.etcd;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.etcd.jetcd.Client;
import io.github.leaderelection.etcd.GroupWatches.GroupKey;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.testing.EtcdServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The store's watches: one etcd watch over the namespace's groups, counted by etcd itself
 * (its {@code etcd_debugging_mvcc_watcher_total} gauge, the watchers its watch streams
 * hold), each group's changes told to that group's watches only, and the watch opened
 * again after etcd restarts. The member is this class's own, so that the gauge counts
 * this class's watches only; each test closes its stores.
 */
@Order(3)
class EtcdWatchTests {

	private static final String WATCHERS = "etcd_debugging_mvcc_watcher_total";

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private static final Duration WAIT = Duration.ofSeconds(60);

	private static EtcdServer etcd;

	private static Client client;

	private final Deque<AutoCloseable> resources = new ArrayDeque<>();

	@BeforeAll
	static void startEtcd() throws Exception {
		etcd = new EtcdServer(Path.of("target/etcd/watches"));
		etcd.start();
		client = Client.builder().endpoints(etcd.endpoint()).connectTimeout(Duration.ofSeconds(1)).build();
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

	@AfterEach
	void close() throws Exception {
		while (!this.resources.isEmpty()) {
			this.resources.pop().close();
		}
		await().atMost(WAIT).until(() -> watchers() == 0);
	}

	@Test
	void opensOneEtcdWatchForFiftyGroups() throws Exception {
		assertThat(watchers()).isZero();
		EtcdLeaseStore store = store("fifty");
		List<AutoCloseable> watches = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			watches.add(store.watch("group-" + i, () -> {
			}));
		}
		await().atMost(WAIT).during(Duration.ofSeconds(1)).until(EtcdWatchTests::watchers, (count) -> count == 1);
		// A second store, another instance: a watch of its own.
		EtcdLeaseStore other = store("fifty");
		watches.add(other.watch("group-0", () -> {
		}));
		await().atMost(WAIT).during(Duration.ofSeconds(1)).until(EtcdWatchTests::watchers, (count) -> count == 2);
		// Closing every watch of a store keeps its etcd watch; closing the store ends it.
		for (AutoCloseable watch : watches) {
			watch.close();
		}
		assertThat(watchers()).isEqualTo(2);
		store.close();
		other.close();
		await().atMost(WAIT).until(EtcdWatchTests::watchers, (count) -> count == 0);
	}

	@Test
	void tellsEachGroupOfItsOwnChangesOnly() throws Exception {
		EtcdLeaseStore watching = store("own-changes");
		EtcdLeaseStore writing = store("own-changes");
		List<String> groups = List.of("quiet", "orders", "orders/eu west+1%", "last");
		Map<String, AtomicInteger> changes = new LinkedHashMap<>();
		for (String group : groups) {
			changes.put(group, new AtomicInteger());
			this.resources.push(watching.watch(group, changes.get(group)::incrementAndGet));
		}
		AtomicInteger secondOfOrders = new AtomicInteger();
		this.resources.push(watching.watch("orders", secondOfOrders::incrementAndGet));
		AtomicInteger closed = new AtomicInteger();
		watching.watch("closed", closed::incrementAndGet).close();
		await().atMost(WAIT).until(EtcdWatchTests::watchers, (count) -> count == 1);

		// Keys under the groups that are no group's keys, as the store spells them.
		for (String key : List.of("junk", "quiet/other", "quiet/record/more", "qu%69et/record", "%zz/record",
				"nested/groups/quiet/record")) {
			client.getKVClient()
				.put(EtcdLeaseStore.bytes("own-changes/groups/" + key), EtcdLeaseStore.bytes("x"))
				.get();
		}
		writing.tryAcquire("orders", "a", LEASE, TIMEOUT).orElseThrow();
		Lease odd = writing.tryAcquire("orders/eu west+1%", "a", LEASE, TIMEOUT).orElseThrow();
		writing.release(odd, TIMEOUT);
		writing.tryAcquire("closed", "a", LEASE, TIMEOUT).orElseThrow();
		writing.tryAcquire("unwatched", "a", LEASE, TIMEOUT).orElseThrow();
		// The watch tells of changes in the order they happened: once it told of the
		// last, it told of all the others.
		writing.tryAcquire("last", "a", LEASE, TIMEOUT).orElseThrow();
		await().atMost(WAIT).until(() -> changes.get("last").get() > 0);

		assertThat(changes.get("orders")).hasPositiveValue();
		assertThat(secondOfOrders).hasPositiveValue();
		assertThat(changes.get("orders/eu west+1%")).hasPositiveValue();
		assertThat(changes.get("quiet")).hasValue(0);
		assertThat(closed).hasValue(0);
	}

	@Test
	void tellsEveryWatchWhenEtcdCrashesAndHearsChangesAgainOnceItIsBack() throws Exception {
		hearsChangesAgainAfterARestart("crash", true);
	}

	@Test
	void tellsEveryWatchWhenEtcdStopsAndHearsChangesAgainOnceItIsBack() throws Exception {
		hearsChangesAgainAfterARestart("stop", false);
	}

	private void hearsChangesAgainAfterARestart(String namespace, boolean crash) throws Exception {
		EtcdLeaseStore watching = store(namespace);
		EtcdLeaseStore writing = store(namespace);
		Map<String, AtomicInteger> changes = new LinkedHashMap<>();
		for (String group : List.of("a", "b", "last")) {
			changes.put(group, new AtomicInteger());
			this.resources.push(watching.watch(group, changes.get(group)::incrementAndGet));
		}
		await().atMost(WAIT).until(EtcdWatchTests::watchers, (count) -> count == 1);
		Lease held = writing.tryAcquire("a", "w", LEASE, TIMEOUT).orElseThrow();
		await().atMost(WAIT).until(() -> changes.get("a").get() > 0);
		Map<String, Integer> running = counts(changes);

		etcd.stop(crash);
		// Told of the failure: each group is read again.
		await().atMost(WAIT).until(() -> told(changes, running));
		Map<String, Integer> failed = counts(changes);
		etcd.restart();
		// The watch is opened again, and every watch told once more: what changed while
		// the watch was away is read again.
		await().atMost(WAIT).until(() -> told(changes, failed));
		// One watch: the failed one was not resumed by jetcd besides.
		await().atMost(WAIT).during(Duration.ofSeconds(1)).until(EtcdWatchTests::watchers, (count) -> count == 1);
		Map<String, Integer> back = counts(changes);

		writing.release(held, TIMEOUT);
		writing.tryAcquire("last", "w", LEASE, TIMEOUT).orElseThrow();
		await().atMost(WAIT).until(() -> changes.get("last").get() > back.get("last"));
		assertThat(changes.get("a").get()).isGreaterThan(back.get("a"));
		assertThat(changes.get("b").get()).isEqualTo(back.get("b"));

		// A store closed while its watch waits to be opened again opens none.
		etcd.stop(crash);
		await().atMost(WAIT).until(() -> changes.get("b").get() > back.get("b"));
		watching.close();
		etcd.restart();
		assertThat(writing.read("a", TIMEOUT)).isPresent();
		await().atMost(WAIT).during(Duration.ofSeconds(5)).until(EtcdWatchTests::watchers, (count) -> count == 0);
	}

	private static Map<String, Integer> counts(Map<String, AtomicInteger> changes) {
		Map<String, Integer> counts = new LinkedHashMap<>();
		changes.forEach((group, count) -> counts.put(group, count.get()));
		return counts;
	}

	/** Whether every group was told of a change since the counts. */
	private static boolean told(Map<String, AtomicInteger> changes, Map<String, Integer> since) {
		return changes.entrySet().stream().allMatch((entry) -> entry.getValue().get() > since.get(entry.getKey()));
	}

	@Test
	void decodesTheGroupOfAKeyAsTheStoreSpellsIt() {
		String prefix = "ns/groups/";
		assertThat(GroupWatches.groupKey(prefix, EtcdLeaseStore.groupKey("ns", "a/b c+%", "record")))
			.isEqualTo(new GroupKey("a/b c+%", true));
		assertThat(GroupWatches.groupKey(prefix, EtcdLeaseStore.groupKey("ns", "é", "lease")))
			.isEqualTo(new GroupKey("é", false));
		for (String key : List.of("ns/groups/a", "ns/groups//record", "ns/groups/a/other", "ns/groups/a/record/b",
				"ns/groups/%zz/record", "ns/groups/a%20b/record", "ns/groups/nested/groups/a/record",
				"other/groups/a/record")) {
			assertThat(GroupWatches.groupKey(prefix, EtcdLeaseStore.bytes(key))).as(key).isNull();
		}
	}

	private EtcdLeaseStore store(String namespace) {
		EtcdLeaseStore store = new EtcdLeaseStore(client, namespace);
		this.resources.add(store);
		return store;
	}

	/** The watchers etcd holds now, of every watch stream. */
	private static long watchers() throws IOException {
		HttpURLConnection connection = (HttpURLConnection) URI.create(etcd.endpoint() + "/metrics")
			.toURL()
			.openConnection();
		connection.setConnectTimeout(1000);
		connection.setReadTimeout(5000);
		try (BufferedReader in = new BufferedReader(
				new InputStreamReader(connection.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = in.readLine()) != null) {
				if (line.startsWith(WATCHERS + " ")) {
					return (long) Double.parseDouble(line.substring(WATCHERS.length() + 1));
				}
			}
		}
		finally {
			connection.disconnect();
		}
		throw new IllegalStateException("etcd's /metrics has no " + WATCHERS);
	}

}
