package io.github.leaderelection.redis;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.github.leaderelection.testing.LocalRedisServer;
import io.github.leaderelection.testing.TestRedis;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.test.store.LeaseStoreContractTests;
import io.github.leaderelection.test.store.RunRecordStoreContractTests;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.event.command.CommandFailedEvent;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import io.lettuce.core.event.command.CommandSucceededEvent;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

/**
 * Contract tests for {@link RedisLeaseStore} on a Redis Cluster of the test's own: three
 * masters with one replica each, all local {@code redis-server} processes, reached
 * through a Lettuce cluster connection. The run record contract runs on the same Cluster
 * ({@link RunRecords}).
 */
class RedisClusterLeaseStoreTests extends LeaseStoreContractTests {

	private static final String PREFIX = "cluster-test:";

	private static final Duration LIVE = Duration.ofSeconds(30);

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final Pattern CALLS = Pattern.compile("cmdstat_(\\w+):calls=(\\d+)");

	private static final List<LocalRedisServer> nodes = new ArrayList<>();

	private static LettuceConnectionFactory factory;

	/** Commands that the client sent and that have not been answered yet. */
	private static final AtomicInteger unanswered = new AtomicInteger();

	@BeforeAll
	static void startCluster() throws Exception {
		List<String> addresses = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			LocalRedisServer node = LocalRedisServer.start(LocalRedisServer.freePort(true), "--cluster-enabled", "yes",
					"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000");
			nodes.add(node);
			addresses.add("127.0.0.1:" + node.port());
		}
		List<String> create = new ArrayList<>(List.of(redisCli(), "--cluster", "create"));
		create.addAll(addresses);
		create.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
		Process process = new ProcessBuilder(create).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
			fail("redis-cli --cluster create failed:\n" + output);
		}
		await().atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(100))
			.until(() -> nodes.stream()
				.allMatch((node) -> node.command("CLUSTER", "INFO").contains("cluster_state:ok")
						&& !node.command("INFO", "replication").contains("master_link_status:down")));
		factory = TestRedis.connect(new RedisClusterConfiguration(addresses));
		// Before the first connection, which takes the client's listeners when it opens.
		factory.getRequiredNativeClient().addListener(new CommandListener() {

			@Override
			public void commandStarted(CommandStartedEvent event) {
				unanswered.incrementAndGet();
			}

			@Override
			public void commandSucceeded(CommandSucceededEvent event) {
				unanswered.decrementAndGet();
			}

			@Override
			public void commandFailed(CommandFailedEvent event) {
				unanswered.decrementAndGet();
			}

		});
	}

	@AfterAll
	static void stopCluster() {
		if (factory != null) {
			factory.destroy();
		}
		nodes.forEach(LocalRedisServer::close);
	}

	@Override
	protected RedisLeaseStore createStore() {
		return new RedisLeaseStore(factory, PREFIX);
	}

	@Override
	protected LeaseStore createStoreWithIdentifier(String unsafeIdentifier) {
		return new RedisLeaseStore(factory, unsafeIdentifier);
	}

	@Test
	void electsInGroupsOnEveryMasterWhateverBracesTheirNamesContain() {
		RedisLeaseStore store = new RedisLeaseStore(factory, PREFIX);
		List<String> groups = new ArrayList<>(List.of("a}b", "{x}", "}{", "{", "}", "a{b}c"));
		for (int i = 0; i < 20; i++) {
			groups.add("group-" + UUID.randomUUID());
		}
		for (String group : groups) {
			Lease lease = store.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
			assertThat(store.renew(lease, LIVE, TIMEOUT)).as(group).isPresent();
			store.release(lease, TIMEOUT);
		}
		Set<Integer> masters = groups.stream()
			.map((group) -> SlotHash.getSlot(store.key(group, "lease")) * 3 / SlotHash.SLOT_COUNT)
			.collect(Collectors.toSet());
		assertThat(masters).hasSize(3);
	}

	@Test
	void waitsForTheReplicaOfTheMasterOfEachGroup() {
		RedisLeaseStore store = new RedisLeaseStore(factory, PREFIX, 1, Duration.ofSeconds(3));
		for (int i = 0; i < 6; i++) {
			String group = "acked-" + UUID.randomUUID();
			Lease lease = store.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
			assertThat(store.renew(lease, LIVE, TIMEOUT)).isPresent();
		}
		RedisLeaseStore demanding = new RedisLeaseStore(factory, PREFIX, 2, Duration.ofMillis(200));
		assertThatExceptionOfType(LeaderElectionException.class)
			.isThrownBy(() -> demanding.tryAcquire("acked-" + UUID.randomUUID(), "a", LIVE, TIMEOUT))
			.withMessageContaining("of the 2 replica acknowledgements required");
	}

	@Test
	void acquiresRenewsAndReadsWithOneScriptPerHashSlot() {
		RedisLeaseStore store = new RedisLeaseStore(factory, PREFIX);
		String run = UUID.randomUUID().toString();
		List<String> groups = new ArrayList<>();
		for (int i = 0; i < 300; i++) {
			groups.add("spread-" + run + "-" + i);
		}
		// And 40 groups that share the slot of the first: one script takes them all.
		int shared = SlotHash.getSlot(store.key(groups.get(0), "lease"));
		for (int i = 0; groups.size() < 340; i++) {
			String group = "shared-" + run + "-" + i;
			if (SlotHash.getSlot(store.key(group, "lease")) == shared) {
				groups.add(group);
			}
		}
		long slots = groups.stream().map((group) -> SlotHash.getSlot(store.key(group, "lease"))).distinct().count();
		assertThat(slots).isLessThanOrEqualTo(groups.size() - 40);
		// Every master learns the scripts, on the same slots under another prefix.
		RedisLeaseStore warmUp = new RedisLeaseStore(factory, "cluster-warm-up:");
		warmUp.renewAll(warmUp.tryAcquireAll(groups, "a", LIVE, TIMEOUT).values(), LIVE, TIMEOUT);
		warmUp.readAll(groups, TIMEOUT);
		long before = calls("eval", "evalsha");
		Map<String, Lease> taken = store.tryAcquireAll(groups, "a", LIVE, TIMEOUT);
		assertThat(calls("eval", "evalsha") - before).isEqualTo(slots);
		assertThat(taken).containsOnlyKeys(groups);
		List<Lease> leases = List.copyOf(taken.values());
		before = calls("eval", "evalsha");
		assertThat(store.renewAll(leases, RENEWED, TIMEOUT).keySet()).containsExactlyInAnyOrderElementsOf(groups);
		assertThat(calls("eval", "evalsha") - before).isEqualTo(slots);
		before = calls("eval", "evalsha");
		Map<String, Lease> read = store.readAll(groups, TIMEOUT);
		assertThat(calls("eval", "evalsha") - before).isEqualTo(slots);
		assertThat(read).containsOnlyKeys(groups);
		for (Lease lease : leases) {
			assertThat(read.get(lease.group()).term()).isEqualTo(lease.term());
			assertThat(read.get(lease.group()).expiresIn()).isGreaterThan(LIVE);
		}
	}

	/**
	 * While the masters hold back every script's answer ({@code CLIENT PAUSE WRITE}), a
	 * client that awaited each script before the next would have one unanswered; this one
	 * has sent them all.
	 */
	@Test
	void sendsTheScriptsOfAllSlotsBeforeAnyAnswerComes() throws Exception {
		RedisLeaseStore store = new RedisLeaseStore(factory, PREFIX);
		List<Lease> leases = new ArrayList<>();
		for (int i = 0; i < 100; i++) {
			leases.add(store.tryAcquire("pipelined-" + UUID.randomUUID(), "a", LIVE, TIMEOUT).orElseThrow());
		}
		long slots = leases.stream()
			.map((lease) -> SlotHash.getSlot(store.key(lease.group(), "lease")))
			.distinct()
			.count();
		store.renewAll(leases, LIVE, TIMEOUT); // every master learns the script
		List<LocalRedisServer> masters = nodes.stream()
			.filter((node) -> node.command("INFO", "replication").contains("role:master"))
			.toList();
		assertThat(masters).hasSize(3);
		int before = unanswered.get();
		masters.forEach((master) -> master.command("CLIENT", "PAUSE", "10000", "WRITE"));
		CompletableFuture<Set<String>> renewal;
		try {
			renewal = CompletableFuture.supplyAsync(() -> store.renewAll(leases, RENEWED, TIMEOUT).keySet());
			await().atMost(Duration.ofSeconds(3)).until(() -> unanswered.get() - before >= slots);
		}
		finally {
			masters.forEach((master) -> master.command("CLIENT", "UNPAUSE"));
		}
		assertThat(renewal.get(10, TimeUnit.SECONDS)).hasSize(100);
	}

	@Test
	void renewsOnEveryMasterWaitingOnceForTheReplicaOfEach() {
		RedisLeaseStore store = new RedisLeaseStore(factory, PREFIX, 1, Duration.ofSeconds(3));
		List<Lease> leases = new ArrayList<>();
		for (int i = 0; i < 30; i++) {
			leases.add(store.tryAcquire("acked-" + UUID.randomUUID(), "a", LIVE, TIMEOUT).orElseThrow());
		}
		assertThat(leases.stream()
			.map((lease) -> SlotHash.getSlot(store.key(lease.group(), "lease")) * 3 / SlotHash.SLOT_COUNT)
			.distinct()).hasSize(3);
		long waits = calls("wait");
		assertThat(store.renewAll(leases, RENEWED, TIMEOUT).keySet()).hasSize(30);
		assertThat(calls("wait") - waits).isEqualTo(3);
		RedisLeaseStore demanding = new RedisLeaseStore(factory, PREFIX, 2, Duration.ofMillis(200));
		assertThatExceptionOfType(LeaderElectionException.class)
			.isThrownBy(() -> demanding.renewAll(leases, RENEWED, TIMEOUT))
			.withMessageContaining("renew the leases of 30 groups")
			.withMessageContaining("1 of the 2 replica acknowledgements required");
	}

	@Test
	void acquiresOnEveryMasterWaitingOnceForTheReplicaOfEachAndGivesAllBackWhenTooFewAcknowledge() {
		RedisLeaseStore store = new RedisLeaseStore(factory, PREFIX, 1, Duration.ofSeconds(3));
		List<String> groups = newGroups("acked-", 30);
		assertThat(groups.stream()
			.map((group) -> SlotHash.getSlot(store.key(group, "lease")) * 3 / SlotHash.SLOT_COUNT)
			.distinct()).hasSize(3);
		long waits = calls("wait");
		Map<String, Lease> taken = store.tryAcquireAll(groups, "a", LIVE, TIMEOUT);
		assertThat(taken).containsOnlyKeys(groups);
		assertThat(calls("wait") - waits).isEqualTo(3);
		RedisLeaseStore demanding = new RedisLeaseStore(factory, PREFIX, 2, Duration.ofMillis(200));
		List<String> free = newGroups("given-back-", 30);
		List<String> batch = new ArrayList<>(free);
		batch.addAll(groups.subList(0, 5));
		assertThatExceptionOfType(LeaderElectionException.class)
			.isThrownBy(() -> demanding.tryAcquireAll(batch, "b", LIVE, TIMEOUT))
			.withMessageContaining("acquire the leases of 35 groups")
			.withMessageContaining("1 of the 2 replica acknowledgements required");
		Map<String, Lease> read = store.readAll(batch, TIMEOUT);
		for (String group : free) {
			assertThat(read.get(group).holder()).as(group).isNull();
		}
		for (String group : groups.subList(0, 5)) {
			assertThat(read.get(group).holder()).as(group).isEqualTo("a");
			assertThat(read.get(group).term()).as(group).isEqualTo(taken.get(group).term());
		}
	}

	/**
	 * The run record contract on the Cluster: a script that lists a group's runs reads
	 * keys it was not given, which the Cluster accepts only in the script's slot.
	 */
	@Nested
	class RunRecords extends RunRecordStoreContractTests {

		@Override
		protected LeaseStore createStore() {
			return new RedisLeaseStore(factory, PREFIX);
		}

	}

	private static List<String> newGroups(String prefix, int count) {
		List<String> groups = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			groups.add(prefix + UUID.randomUUID());
		}
		return groups;
	}

	/** Calls of the commands on every node of the cluster since it started. */
	private static long calls(String... commands) {
		long calls = 0;
		for (LocalRedisServer node : nodes) {
			Matcher matcher = CALLS.matcher(node.command("INFO", "commandstats"));
			while (matcher.find()) {
				if (List.of(commands).contains(matcher.group(1))) {
					calls += Long.parseLong(matcher.group(2));
				}
			}
		}
		return calls;
	}

	private static String redisCli() {
		for (String candidate : List.of("/usr/bin/redis-cli", "/usr/local/bin/redis-cli")) {
			if (Files.isExecutable(Path.of(candidate))) {
				return candidate;
			}
		}
		return "redis-cli";
	}

}
