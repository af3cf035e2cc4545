package io.github.leaderelection.redis;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.testing.TestRedis;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A Redis user with exactly the ACL that docs/security.md gives, read from the page, runs
 * every operation of the store, a watch included.
 */
class RedisLeastRightsTests {

	private static final Duration LEASE = Duration.ofSeconds(15);

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	@Test
	void runsWithTheAclOfTheSecurityPage() throws Exception {
		String prefix = TestRedis.uniquePrefix();
		String user = "elector-" + UUID.randomUUID().toString().substring(0, 8);
		List<String> rule = aclRule(prefix);
		LettuceConnectionFactory admin = TestRedis.shared();
		List<String> setUser = new ArrayList<>(List.of("SETUSER", user));
		setUser.addAll(rule);
		acl(new StatusOutput<>(ByteArrayCodec.INSTANCE), setUser);
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration(admin.getHostName(),
				admin.getPort());
		configuration.setUsername(user);
		configuration.setPassword(RedisPassword.of("change-me"));
		LettuceConnectionFactory elector = TestRedis.connect(configuration);
		try (RedisLeaseStore store = new RedisLeaseStore(elector, prefix)) {
			AtomicInteger changes = new AtomicInteger();
			try (AutoCloseable watch = store.watch("orders", changes::incrementAndGet)) {
				Lease lease = store.tryAcquire("orders", "a", LEASE, TIMEOUT).orElseThrow();
				assertThat(store.renew(lease, LEASE, TIMEOUT)).isPresent();
				assertThat(store.read("orders", TIMEOUT))
					.hasValueSatisfying((read) -> assertThat(read.holder()).isEqualTo("a"));
				assertThat(store.tryAcquireAll(Set.of("billing", "shipping"), "a", LEASE, TIMEOUT)).hasSize(2);
				assertThat(
						store.renewAll(store.readAll(Set.of("billing", "shipping"), TIMEOUT).values(), LEASE, TIMEOUT)
							.keySet())
					.hasSize(2);
				Lease billing = store.read("billing", TIMEOUT).orElseThrow();
				RunRecord run = new RunRecord("billing", "report", 1_000, "a", billing.term(),
						Instant.ofEpochMilli(1_000), null, RunOutcome.RUNNING);
				assertThat(store.claimRun(billing, run, Duration.ZERO, TIMEOUT)).isTrue();
				assertThat(store.finishRun(run.endedAs(RunOutcome.SUCCEEDED, Instant.ofEpochMilli(2_000)), TIMEOUT))
					.isTrue();
				assertThat(store.lastRun("billing", "report", TIMEOUT)).isPresent();
				assertThat(store.runs("billing", TIMEOUT)).extracting(RunRecord::job).containsExactly("report");
				store.forceLeader("billing", "b", TIMEOUT);
				store.clear("shipping", TIMEOUT);
				assertThat(store.keepCandidateAlive("a", 1, LEASE, TIMEOUT)).containsKey("a");
				store.removeCandidate("a", TIMEOUT);
				// The watch subscribes in the background: release until it hears one.
				await().atMost(Duration.ofSeconds(20)).until(() -> {
					store.tryAcquire("orders", "a", LEASE, TIMEOUT).ifPresent((held) -> store.release(held, TIMEOUT));
					return changes.get() > 0;
				});
			}
		}
		finally {
			elector.destroy();
			acl(new IntegerOutput<>(ByteArrayCodec.INSTANCE), List.of("DELUSER", user));
			TestRedis.deleteKeys(prefix);
		}
	}

	@SuppressWarnings("unchecked")
	private static void acl(CommandOutput<byte[], byte[], ?> output, List<String> args) throws Exception {
		try (RedisConnection connection = TestRedis.shared().getConnection()) {
			CommandArgs<byte[], byte[]> arguments = new CommandArgs<>(ByteArrayCodec.INSTANCE);
			args.forEach(arguments::add);
			((RedisClusterAsyncCommands<byte[], byte[]>) connection.getNativeConnection())
				.dispatch(CommandType.ACL, output, arguments)
				.get(10, TimeUnit.SECONDS);
		}
	}

	/** The arguments of the page's ACL SETUSER, for the key prefix given. */
	private static List<String> aclRule(String prefix) throws IOException {
		String page = Files.readString(Path.of("../docs/security.md"));
		int start = page.indexOf("ACL SETUSER elector ");
		assertThat(start).as("an ACL SETUSER line in docs/security.md").isNotNegative();
		String line = page.substring(start + "ACL SETUSER elector ".length(), page.indexOf('\n', start));
		return List.of(line.replace("leader-election:", prefix).split(" "));
	}

}
