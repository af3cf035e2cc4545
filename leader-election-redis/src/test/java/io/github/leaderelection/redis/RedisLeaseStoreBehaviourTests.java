package io.github.leaderelection.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.leaderelection.testing.LocalRedisServer;
import io.github.leaderelection.testing.TestRedis;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.spi.Lease;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * Tests for what only {@link RedisLeaseStore} does: its keys, its behaviour when Redis
 * loses the data of a group, its announcements and its timeouts. The lease rules are in
 * {@link RedisLeaseStoreTests}. Data loss is simulated on the shared Redis by changing
 * this test's own keys; whole-server losses are in {@link RedisElectionFaultTests}.
 */
class RedisLeaseStoreBehaviourTests {

	private static final String PREFIX = TestRedis.uniquePrefix();

	private static final Duration LIVE = Duration.ofSeconds(30);

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	@AfterAll
	static void deleteKeys() {
		TestRedis.deleteKeys(PREFIX);
	}

	@Test
	void namesKeysWithPrefixAndGroupInsideOneHashTag() {
		RedisLeaseStore store = store();
		assertThat(new RedisLeaseStore(TestRedis.shared()).key("orders", "lease"))
			.isEqualTo("leader-election:{orders}:lease");
		assertThat(store.key("orders", "term")).isEqualTo(PREFIX + "{orders}:term");
	}

	@Test
	void keepsEachGroupInOneHashSlotWhateverBracesItContains() {
		RedisLeaseStore store = store();
		List<String> groups = List.of("orders", "a}b", "{x}", "}{", "{", "}", "%7B", "%", "a{b}c{d}", "x}:lease");
		for (String group : groups) {
			int slot = SlotHash.getSlot(store.key(group, "lease"));
			assertThat(SlotHash.getSlot(store.key(group, "term"))).as(group).isEqualTo(slot);
			assertThat(SlotHash.getSlot(store.key(group, "events"))).as(group).isEqualTo(slot);
			assertThat(slot).as(group).isEqualTo(SlotHash.getSlot(RedisLeaseStore.hashTag(group)));
		}
		assertThat(groups.stream().map((group) -> store.key(group, "lease")).distinct()).hasSameSizeAs(groups);
	}

	@Test
	void electsInGroupsWithBracesAndPercentSigns() {
		RedisLeaseStore store = store();
		for (String group : List.of("a}b-" + UUID.randomUUID(), "{" + UUID.randomUUID() + "}",
				"%7B" + UUID.randomUUID())) {
			Lease lease = store.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
			assertThat(store.read(group, TIMEOUT).orElseThrow().holder()).isEqualTo("a");
			assertThat(store.renew(lease, LIVE, TIMEOUT)).isPresent();
		}
	}

	@Test
	void acceptsDefaultAndDashedPrefixesAndRefusesBracesAndOverlongOnes() {
		new RedisLeaseStore(TestRedis.shared(), RedisLeaseStore.DEFAULT_KEY_PREFIX);
		new RedisLeaseStore(TestRedis.shared(), "app-1.elections:");
		for (String invalid : List.of("a{b}", "a}", "a-", "a--b", "a".repeat(65), "é")) {
			assertThatIllegalArgumentException().isThrownBy(() -> new RedisLeaseStore(TestRedis.shared(), invalid))
				.withMessageContaining("'" + invalid + "'")
				.withMessageContaining("must match " + RedisLeaseStore.KEY_PREFIX_PATTERN);
		}
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new RedisLeaseStore(TestRedis.shared(), PREFIX, 1, Duration.ZERO))
			.withMessageContaining("replicaAckTimeout");
	}

	@Test
	void waitsOneLeaseDurationWhenTheRecordItSawIsGone() {
		String group = newGroup();
		RedisLeaseStore leader = store();
		RedisLeaseStore follower = store();
		Lease old = leader.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		assertThat(follower.read(group, TIMEOUT)).isPresent();
		long before = serverMicros();
		deleteKeysOf(leader, group); // as FLUSHALL or a restart without persistence would
		assertThat(leader.renew(old, LIVE, TIMEOUT)).isEmpty();
		Lease lease = follower.tryAcquire(group, "b", LIVE, TIMEOUT).orElseThrow();
		assertThat(lease.activeIn()).isGreaterThan(LIVE.minusSeconds(1)).isLessThanOrEqualTo(LIVE);
		assertThat(lease.term()).isGreaterThan(old.term()).isGreaterThanOrEqualTo(before);
	}

	@Test
	void waitsOneLeaseDurationWhenTheRecordWasWrittenByAnotherRedisProcess() {
		String group = newGroup();
		RedisLeaseStore store = store();
		Lease old = store.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		store.release(old, TIMEOUT);
		// What a restart from an old snapshot, a failover or a resharding leaves behind.
		hset(store.key(group, "term"), "server", "0123456789abcdef0123456789abcdef01234567");
		long before = serverMicros();
		Duration lease = Duration.ofMillis(500);
		Lease pending = store().tryAcquire(group, "b", lease, TIMEOUT).orElseThrow();
		assertThat(pending.activeIn()).isGreaterThan(lease.minusMillis(100)).isLessThanOrEqualTo(lease);
		assertThat(pending.term()).isGreaterThan(old.term()).isGreaterThanOrEqualTo(before);
		// Once the wait is over, the grant vouches for the record: the next handover is
		// at once, a term up.
		await().atMost(Duration.ofSeconds(5)).until(() -> store.read(group, TIMEOUT).orElseThrow().activeIn().isZero());
		store.release(pending, TIMEOUT);
		Lease next = store().tryAcquire(group, "c", LIVE, TIMEOUT).orElseThrow();
		assertThat(next.activeIn()).isZero();
		assertThat(next.term()).isGreaterThan(pending.term());
	}

	@Test
	void waitsForAForcedLeaderOnARecordItSawLost() {
		String group = newGroup();
		RedisLeaseStore admin = store();
		Lease old = admin.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		deleteKeysOf(admin, group);
		admin.forceLeader(group, "b", TIMEOUT);
		Lease lease = store().tryAcquire(group, "b", LIVE, TIMEOUT).orElseThrow();
		assertThat(lease.activeIn()).isGreaterThan(LIVE.minusSeconds(1));
		assertThat(lease.term()).isGreaterThan(old.term());
	}

	/** NOTE: the limit of the guarantee, stated in the class documentation. */
	@Test
	void actsAtOnceOnAGroupItNeverSawEvenIfItsRecordWasLost() {
		String group = newGroup();
		RedisLeaseStore store = store();
		Lease old = store.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		deleteKeysOf(store, group);
		Lease lease = store().tryAcquire(group, "b", LIVE, TIMEOUT).orElseThrow();
		assertThat(lease.activeIn()).isZero();
		assertThat(lease.term()).isGreaterThan(old.term());
	}

	@Test
	void releaseBeforeActingKeepsTheWaitForThePreviousHolder() {
		String group = newGroup();
		RedisLeaseStore store = store();
		store.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
		store.clear(group, TIMEOUT);
		Lease pending = store().tryAcquire(group, "b", LIVE, TIMEOUT).orElseThrow();
		assertThat(pending.activeIn()).isPositive();
		store.release(pending, TIMEOUT);
		assertThat(store().tryAcquire(group, "c", LIVE, TIMEOUT).orElseThrow().activeIn())
			.isGreaterThan(pending.activeIn().minusSeconds(5));
	}

	@Test
	void announcesReleaseForceAndClearButNotAcquireOrRenew() throws Exception {
		String group = newGroup();
		RedisLeaseStore watcher = store();
		RedisLeaseStore other = store();
		AtomicInteger changes = new AtomicInteger();
		try (watcher) {
			AutoCloseable watch = watcher.watch(group, changes::incrementAndGet);
			Lease lease = other.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
			other.renew(lease, LIVE, TIMEOUT);
			other.release(lease, TIMEOUT);
			await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(changes).hasValue(1));
			other.forceLeader(group, "b", TIMEOUT);
			await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(changes).hasValue(2));
			other.clear(group, TIMEOUT);
			await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(changes).hasValue(3));
			watch.close();
			other.forceLeader(group, "c", TIMEOUT);
			Thread.sleep(300);
			assertThat(changes).hasValue(3);
		}
	}

	/**
	 * Watching many groups costs one pattern subscription, not one channel each (20,000
	 * subscriptions when 10,000 groups start on 3 instances), and a message reaches the
	 * watches of its own group only.
	 */
	@Test
	void watchesEveryGroupThroughOnePatternSubscription() throws Exception {
		String prefix = TestRedis.uniquePrefix();
		RedisLeaseStore other = new RedisLeaseStore(TestRedis.shared(), prefix);
		long patternsBefore = numpat();
		long channelsBefore = channels();
		try (RedisLeaseStore watcher = new RedisLeaseStore(TestRedis.shared(), prefix)) {
			List<AtomicInteger> changes = new ArrayList<>();
			for (int i = 0; i < 200; i++) {
				AtomicInteger count = new AtomicInteger();
				changes.add(count);
				watcher.watch("group-" + i, count::incrementAndGet);
			}
			await().atMost(Duration.ofSeconds(10)).until(() -> numpat() == patternsBefore + 1);
			assertThat(channels()).as("channels subscribed").isEqualTo(channelsBefore);
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
				Lease lease = other.tryAcquire("group-7", "a", LIVE, TIMEOUT).orElseThrow();
				other.release(lease, TIMEOUT);
				assertThat(changes.get(7)).hasPositiveValue();
			});
			for (int i = 0; i < changes.size(); i++) {
				if (i != 7) {
					assertThat(changes.get(i)).as("changes heard in group-%d", i).hasValue(0);
				}
			}
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> numpat() == patternsBefore);
	}

	/**
	 * A watch opened while Redis does not answer subscribes once it does; the failure is
	 * said once at WARN (hand-overs are slower until then), and the recovery at INFO.
	 */
	@Test
	void watchesFromBeforeRedisAnswers() throws Exception {
		int port = LocalRedisServer.freePort(false);
		LettuceConnectionFactory factory = TestRedis.connect(new RedisStandaloneConfiguration("127.0.0.1", port));
		AtomicInteger changes = new AtomicInteger();
		Logger events = (Logger) LoggerFactory.getLogger(LeaseEvents.class);
		ListAppender<ILoggingEvent> logged = new ListAppender<>();
		logged.start();
		events.addAppender(logged);
		try (RedisLeaseStore store = new RedisLeaseStore(factory)) {
			store.watch("orders", changes::incrementAndGet);
			try (LocalRedisServer server = LocalRedisServer.start(port)) {
				Lease lease = store.tryAcquire("orders", "a", LIVE, TIMEOUT).orElseThrow();
				await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
					store.release(lease, TIMEOUT);
					store.forceLeader("orders", "b", TIMEOUT);
					store.clear("orders", TIMEOUT);
					assertThat(changes).hasPositiveValue();
				});
			}
			List<String> said = logged.list.stream()
				.filter((event) -> event.getLevel().isGreaterOrEqual(Level.INFO))
				.map((event) -> event.getLevel() + " " + event.getFormattedMessage())
				.toList();
			assertThat(said).hasSize(2);
			assertThat(said.get(0)).startsWith("WARN Could not subscribe to leader-election:*");
			assertThat(said.get(1)).startsWith("INFO Subscribed to leader-election:*");
		}
		finally {
			events.detachAppender(logged);
			factory.destroy();
		}
	}

	@Test
	void givesUpWithinTheCallTimeoutWhenRedisDoesNotAnswer() {
		try (LocalRedisServer server = LocalRedisServer.start()) {
			LettuceConnectionFactory factory = TestRedis.connect(server.configuration());
			try {
				RedisLeaseStore store = new RedisLeaseStore(factory);
				store.read("orders", TIMEOUT);
				server.command("CLIENT", "PAUSE", "3000");
				long start = System.nanoTime();
				assertThatExceptionOfType(LeaderElectionException.class)
					.isThrownBy(() -> store.tryAcquire("orders", "a", LIVE, Duration.ofMillis(200)))
					.withMessageContaining("acquire")
					.withMessageContaining("'orders'");
				assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
			}
			finally {
				factory.destroy();
			}
		}
	}

	@Test
	void reportsUnreachableRedisNamingOperationAndGroup() {
		LettuceConnectionFactory factory = TestRedis
			.connect(new RedisStandaloneConfiguration("127.0.0.1", LocalRedisServer.freePort(false)));
		try {
			assertThatExceptionOfType(LeaderElectionException.class)
				.isThrownBy(() -> new RedisLeaseStore(factory).read("orders", TIMEOUT))
				.withMessageContaining("read")
				.withMessageContaining("'orders'");
		}
		finally {
			factory.destroy();
		}
	}

	private static RedisLeaseStore store() {
		return new RedisLeaseStore(TestRedis.shared(), PREFIX);
	}

	private static String newGroup() {
		return "group-" + UUID.randomUUID();
	}

	private static void deleteKeysOf(RedisLeaseStore store, String group) {
		try (RedisConnection connection = TestRedis.shared().getConnection()) {
			connection.keyCommands().del(bytes(store.key(group, "lease")), bytes(store.key(group, "term")));
		}
	}

	private static void hset(String key, String field, String value) {
		try (RedisConnection connection = TestRedis.shared().getConnection()) {
			connection.hashCommands().hSet(bytes(key), bytes(field), bytes(value));
		}
	}

	private static long serverMicros() {
		try (RedisConnection connection = TestRedis.shared().getConnection()) {
			return connection.serverCommands().time(TimeUnit.MICROSECONDS);
		}
	}

	private static long numpat() {
		return pubsubStat("pubsub_patterns");
	}

	private static long channels() {
		return pubsubStat("pubsub_channels");
	}

	private static long pubsubStat(String name) {
		try (RedisConnection connection = TestRedis.shared().getConnection()) {
			return Long.parseLong(connection.serverCommands().info("stats").getProperty(name).trim());
		}
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

}
