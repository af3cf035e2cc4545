package io.github.leaderelection.redis;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.leaderelection.testing.LocalRedisServer;
import io.github.leaderelection.testing.TestRedis;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.spi.Lease;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Replica acknowledgement ({@code WAIT}) on a master with one replica, both servers of
 * the test's own.
 */
class RedisReplicaAckTests {

	private static final Duration LIVE = Duration.ofSeconds(30);

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final Pattern WAIT_CALLS = Pattern.compile("cmdstat_wait:calls=(\\d+)");

	private static LocalRedisServer master;

	private static LocalRedisServer replica;

	private static LettuceConnectionFactory factory;

	@BeforeAll
	static void startMasterAndReplica() {
		master = LocalRedisServer.start();
		replica = LocalRedisServer.start("--replicaof", "127.0.0.1", Integer.toString(master.port()));
		await().atMost(Duration.ofSeconds(20))
			.until(() -> replica.command("INFO", "replication").contains("master_link_status:up")
					&& master.command("INFO", "replication").contains("connected_slaves:1"));
		factory = TestRedis.connect(master.configuration());
	}

	@AfterAll
	static void stopServers() {
		if (factory != null) {
			factory.destroy();
		}
		if (replica != null) {
			replica.close();
		}
		if (master != null) {
			master.close();
		}
	}

	@Test
	void acquiresAndRenewsOnceTheReplicaHasTheLease() {
		RedisLeaseStore store = new RedisLeaseStore(factory, "acks:", 1, Duration.ofSeconds(3));
		Lease lease = store.tryAcquire("orders", "a", LIVE, TIMEOUT).orElseThrow();
		assertThat(replica.command("GET", store.key("orders", "lease"))).isEqualTo(lease.term() + ":a");
		assertThat(store.renew(lease, LIVE, TIMEOUT)).isPresent();
		store.release(lease, TIMEOUT);
	}

	@Test
	void failsAcquireAndGivesTheLeaseBackWhenTooFewReplicasAcknowledge() {
		RedisLeaseStore store = new RedisLeaseStore(factory, "acks:", 2, Duration.ofMillis(200));
		assertThatExceptionOfType(LeaderElectionException.class)
			.isThrownBy(() -> store.tryAcquire("payments", "a", LIVE, TIMEOUT))
			.withMessageContaining("acquire")
			.withMessageContaining("'payments'")
			.withMessageContaining("of the 2 replica acknowledgements required");
		assertThat(store.read("payments", TIMEOUT).orElseThrow().holder()).isNull();
		Lease lease = new RedisLeaseStore(factory, "acks:").tryAcquire("payments", "b", LIVE, TIMEOUT).orElseThrow();
		assertThat(lease.activeIn()).isZero();
	}

	@Test
	void failsRenewalWithoutLosingTheLeaseWhenTooFewReplicasAcknowledge() {
		Lease lease = new RedisLeaseStore(factory, "acks:").tryAcquire("invoices", "a", LIVE, TIMEOUT).orElseThrow();
		RedisLeaseStore demanding = new RedisLeaseStore(factory, "acks:", 2, Duration.ofMillis(200));
		assertThatExceptionOfType(LeaderElectionException.class).isThrownBy(() -> demanding.renew(lease, LIVE, TIMEOUT))
			.withMessageContaining("renew")
			.withMessageContaining("replica acknowledgements");
		assertThat(demanding.read("invoices", TIMEOUT).orElseThrow().holder()).isEqualTo("a");
	}

	@Test
	void renewsManyGroupsOnceTheReplicaHasThemAndFailsTheWholeCallWhenTooFewAcknowledge() {
		RedisLeaseStore store = new RedisLeaseStore(factory, "acks:", 1, Duration.ofSeconds(3));
		List<Lease> leases = List.of(store.tryAcquire("batch-1", "a", LIVE, TIMEOUT).orElseThrow(),
				store.tryAcquire("batch-2", "a", LIVE, TIMEOUT).orElseThrow(),
				store.tryAcquire("batch-3", "a", LIVE, TIMEOUT).orElseThrow());
		assertThat(store.renewAll(leases, LIVE.plusSeconds(5), TIMEOUT).keySet()).hasSize(3);
		assertThat(Long.parseLong(replica.command("PTTL", store.key("batch-2", "lease")).substring(1)))
			.isGreaterThan(LIVE.toMillis());
		RedisLeaseStore demanding = new RedisLeaseStore(factory, "acks:", 2, Duration.ofMillis(200));
		assertThatExceptionOfType(LeaderElectionException.class)
			.isThrownBy(() -> demanding.renewAll(leases, LIVE, TIMEOUT))
			.withMessageContaining("renew the leases of 3 groups")
			.withMessageContaining("1 of the 2 replica acknowledgements required");
		// Nothing renewed, nothing to acknowledge: not a failure.
		Lease stale = new Lease("batch-1", "a", leases.get(0).term() + 1, LIVE, Duration.ZERO);
		assertThat(demanding.renewAll(List.of(stale), LIVE, TIMEOUT).keySet()).isEmpty();
		assertThat(demanding.read("batch-1", TIMEOUT).orElseThrow().holder()).isEqualTo("a");
	}

	@Test
	void acquiresManyGroupsOnceTheReplicaHasThemAndGivesThemAllBackWhenTooFewAcknowledge() {
		RedisLeaseStore store = new RedisLeaseStore(factory, "acks:", 1, Duration.ofSeconds(3));
		long waits = waitCalls();
		Map<String, Lease> taken = store.tryAcquireAll(List.of("many-1", "many-2", "many-3"), "a", LIVE, TIMEOUT);
		assertThat(taken).containsOnlyKeys("many-1", "many-2", "many-3");
		assertThat(waitCalls() - waits).isOne();
		assertThat(replica.command("GET", store.key("many-2", "lease"))).isEqualTo(taken.get("many-2").term() + ":a");
		Lease held = new RedisLeaseStore(factory, "acks:").tryAcquire("many-held", "b", LIVE, TIMEOUT).orElseThrow();
		RedisLeaseStore demanding = new RedisLeaseStore(factory, "acks:", 2, Duration.ofMillis(200));
		List<String> fresh = List.of("many-4", "many-5", "many-held");
		assertThatExceptionOfType(LeaderElectionException.class)
			.isThrownBy(() -> demanding.tryAcquireAll(fresh, "a", LIVE, TIMEOUT))
			.withMessageContaining("acquire the leases of 3 groups")
			.withMessageContaining("1 of the 2 replica acknowledgements required");
		// Given back, and nobody waits for them; the group held by another is untouched.
		assertThat(store.read("many-4", TIMEOUT).orElseThrow().holder()).isNull();
		assertThat(store.read("many-5", TIMEOUT).orElseThrow().holder()).isNull();
		assertThat(store.read("many-held", TIMEOUT).orElseThrow().term()).isEqualTo(held.term());
		Map<String, Lease> next = new RedisLeaseStore(factory, "acks:").tryAcquireAll(fresh, "c", LIVE, TIMEOUT);
		assertThat(next).containsOnlyKeys("many-4", "many-5");
		assertThat(next.values()).allSatisfy((lease) -> assertThat(lease.activeIn()).isZero());
	}

	@Test
	void saysThatAServerWithoutReplicasNeverAcknowledges() {
		try (LocalRedisServer standalone = LocalRedisServer.start()) {
			LettuceConnectionFactory alone = TestRedis.connect(standalone.configuration());
			try {
				RedisLeaseStore store = new RedisLeaseStore(alone, "acks:", 1, Duration.ofMillis(200));
				assertThatExceptionOfType(LeaderElectionException.class)
					.isThrownBy(() -> store.tryAcquire("standalone", "a", LIVE, TIMEOUT))
					.withMessageContaining("0 of the 1 replica acknowledgements required")
					.withMessageContaining("a Redis server without replicas")
					.withMessageContaining("leader-election.redis.replica-acks=0");
				assertThatExceptionOfType(LeaderElectionException.class)
					.isThrownBy(() -> store.tryAcquireAll(List.of("standalone", "alone"), "a", LIVE, TIMEOUT))
					.withMessageContaining("0 of the 1 replica acknowledgements required")
					.withMessageContaining("a Redis server without replicas");
				assertThat(store.read("alone", TIMEOUT).orElseThrow().holder()).isNull();
			}
			finally {
				alone.destroy();
			}
		}
	}

	@Test
	void saysNothingAboutMissingReplicasWhenSomeAcknowledged() {
		// Long enough for the one replica to acknowledge on a loaded machine: the count
		// is asserted.
		RedisLeaseStore store = new RedisLeaseStore(factory, "acks:", 2, Duration.ofSeconds(2));
		assertThatExceptionOfType(LeaderElectionException.class)
			.isThrownBy(() -> store.tryAcquire("some-acks", "a", LIVE, TIMEOUT))
			.withMessageContaining("1 of the 2 replica acknowledgements required")
			.withMessageNotContaining("without replicas");
	}

	@Test
	void waitsForReplicasNoLongerThanTheCallTimeout() {
		RedisLeaseStore store = new RedisLeaseStore(factory, "acks:", 2, Duration.ofSeconds(10));
		long start = System.nanoTime();
		assertThatExceptionOfType(LeaderElectionException.class)
			.isThrownBy(() -> store.tryAcquire("reports", "a", LIVE, Duration.ofMillis(400)));
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
	}

	/** The {@code WAIT} commands the master ran since it started. */
	private static long waitCalls() {
		Matcher matcher = WAIT_CALLS.matcher(master.command("INFO", "commandstats"));
		return matcher.find() ? Long.parseLong(matcher.group(1)) : 0;
	}

}
