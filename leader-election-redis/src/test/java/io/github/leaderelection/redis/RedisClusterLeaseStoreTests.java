package io.github.leaderelection.redis;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.github.leaderelection.testing.LocalRedisServer;
import io.github.leaderelection.testing.TestRedis;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.test.store.LeaseStoreContractTests;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
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
 * through a Lettuce cluster connection.
 */
class RedisClusterLeaseStoreTests extends LeaseStoreContractTests {

	private static final String PREFIX = "cluster-test:";

	private static final Duration LIVE = Duration.ofSeconds(30);

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final List<LocalRedisServer> nodes = new ArrayList<>();

	private static LettuceConnectionFactory factory;

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
	}

	@AfterAll
	static void stopCluster() {
		if (factory != null) {
			factory.destroy();
		}
		nodes.forEach(LocalRedisServer::close);
	}

	@Override
	protected LeaseStore createStore() {
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
			assertThat(store.renew(lease, LIVE, TIMEOUT)).as(group).isTrue();
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
			assertThat(store.renew(lease, LIVE, TIMEOUT)).isTrue();
		}
		RedisLeaseStore demanding = new RedisLeaseStore(factory, PREFIX, 2, Duration.ofMillis(200));
		assertThatExceptionOfType(LeaderElectionException.class)
			.isThrownBy(() -> demanding.tryAcquire("acked-" + UUID.randomUUID(), "a", LIVE, TIMEOUT))
			.withMessageContaining("of the 2 replica acknowledgements required");
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
