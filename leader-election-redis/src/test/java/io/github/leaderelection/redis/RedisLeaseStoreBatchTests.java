package io.github.leaderelection.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.testing.LocalRedisServer;
import io.github.leaderelection.testing.TestRedis;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Renewing and reading many groups at once on a standalone Redis: what it costs, counted
 * by the server ({@code INFO commandstats}) and by the client (the commands Lettuce
 * sends), and how it behaves when Redis lost a group's data, forgot its scripts or does
 * not answer. The server is the test's own, so that no other test's calls (or
 * {@code SCRIPT FLUSH}) disturb the counts; the rules of batches are checked on the
 * shared server by {@link RedisLeaseStoreTests}.
 */
class RedisLeaseStoreBatchTests {

	private static final Duration LIVE = Duration.ofSeconds(30);

	private static final Duration RENEWED = LIVE.plusSeconds(1);

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final Pattern CALLS = Pattern.compile("cmdstat_(eval|evalsha):calls=(\\d+)");

	private static final AtomicInteger commandsSent = new AtomicInteger();

	private static LocalRedisServer server;

	private static LettuceConnectionFactory factory;

	private RedisLeaseStore store;

	@BeforeAll
	static void startServer() {
		server = LocalRedisServer.start();
		factory = TestRedis.connect(server.configuration());
		// Before the first connection, which takes the client's listeners when it opens.
		factory.getRequiredNativeClient().addListener(new CommandListener() {
			@Override
			public void commandStarted(CommandStartedEvent event) {
				commandsSent.incrementAndGet();
			}
		});
	}

	@AfterAll
	static void stopServer() {
		if (factory != null) {
			factory.destroy();
		}
		if (server != null) {
			server.close();
		}
	}

	@BeforeEach
	void createStore() {
		this.store = new RedisLeaseStore(factory, "batch-" + UUID.randomUUID() + ":");
	}

	@Test
	void renewsAndReadsThreeHundredGroupsWithOneScriptAndOneCommandEach() {
		List<Lease> leases = acquire(300, "a");
		warmUp(leases);
		long scripts = scriptCalls();
		int commands = commandsSent.get();
		assertThat(this.store.renewAll(leases, RENEWED, TIMEOUT)).hasSize(300);
		assertThat(scriptCalls() - scripts).isOne();
		assertThat(commandsSent.get() - commands).isOne();
		scripts = scriptCalls();
		commands = commandsSent.get();
		Map<String, Lease> read = this.store.readAll(groups(leases), TIMEOUT);
		assertThat(scriptCalls() - scripts).isOne();
		assertThat(commandsSent.get() - commands).isOne();
		assertThat(read).hasSize(300);
		for (Lease lease : leases) {
			assertThat(read.get(lease.group()).term()).isEqualTo(lease.term());
			assertThat(read.get(lease.group()).expiresIn()).isGreaterThan(LIVE);
		}
	}

	@Test
	void splitsBatchesOfMoreThanAThousandGroupsIntoScriptsOfAThousand() {
		List<Lease> leases = acquire(2 * LeaseScripts.MAX_GROUPS + 1, "a");
		warmUp(leases);
		long before = scriptCalls();
		assertThat(this.store.renewAll(leases, RENEWED, TIMEOUT)).hasSize(leases.size());
		assertThat(scriptCalls() - before).isEqualTo(3);
		before = scriptCalls();
		Map<String, Lease> read = this.store.readAll(groups(leases), TIMEOUT);
		assertThat(scriptCalls() - before).isEqualTo(3);
		assertThat(read).hasSize(leases.size());
		assertThat(read.values()).allMatch((lease) -> lease.expiresIn().compareTo(LIVE) > 0);
	}

	@Test
	void sendsNothingForLeasesWithoutHolderOrForNoGroups() {
		Lease lease = acquire(1, "a").get(0);
		long before = scriptCalls();
		int commands = commandsSent.get();
		assertThat(this.store.renewAll(List.of(new Lease(lease.group(), null, lease.term(), LIVE, Duration.ZERO)),
				RENEWED, TIMEOUT))
			.isEmpty();
		assertThat(this.store.readAll(List.of(), TIMEOUT)).isEmpty();
		assertThat(scriptCalls() - before).isZero();
		assertThat(commandsSent.get() - commands).isZero();
	}

	/** As {@link RedisLeaseStore#renew}: the record decides, and renewals never vouch. */
	@Test
	void renewsNoGroupWhoseRecordWasLostAndLeavesTheRecordsVoucherAlone() {
		List<Lease> leases = acquire(3, "a");
		Lease lost = leases.get(1);
		Lease foreign = leases.get(2);
		server.command("DEL", this.store.key(lost.group(), "lease"), this.store.key(lost.group(), "term"));
		String otherProcess = "0123456789abcdef0123456789abcdef01234567";
		server.command("HSET", this.store.key(foreign.group(), "term"), "server", otherProcess);
		assertThat(this.store.renewAll(leases, RENEWED, TIMEOUT)).containsExactly(leases.get(0).group(),
				foreign.group());
		assertThat(
				server.command("EXISTS", this.store.key(lost.group(), "lease"), this.store.key(lost.group(), "term")))
			.isEqualTo(":0");
		assertThat(server.command("HGET", this.store.key(foreign.group(), "term"), "server")).isEqualTo(otherProcess);
		assertThat(this.store.readAll(groups(leases), TIMEOUT)).containsOnlyKeys(leases.get(0).group(),
				foreign.group());
	}

	@Test
	void sendsTheScriptsWholeOnceToAServerThatForgotThem() {
		List<Lease> leases = acquire(3, "a");
		warmUp(leases);
		server.command("SCRIPT", "FLUSH"); // as after a restart
		long before = calls("eval");
		assertThat(this.store.renewAll(leases, RENEWED, TIMEOUT)).hasSize(3);
		assertThat(this.store.readAll(groups(leases), TIMEOUT)).hasSize(3);
		assertThat(calls("eval") - before).isEqualTo(2);
		before = scriptCalls();
		assertThat(this.store.renewAll(leases, RENEWED, TIMEOUT)).hasSize(3);
		assertThat(scriptCalls() - before).isOne();
	}

	@Test
	void givesUpWithinTheCallTimeoutWhenRedisDoesNotAnswer() {
		try (LocalRedisServer paused = LocalRedisServer.start()) {
			LettuceConnectionFactory pausedFactory = TestRedis.connect(paused.configuration());
			try {
				RedisLeaseStore store = new RedisLeaseStore(pausedFactory);
				List<Lease> leases = List.of(store.tryAcquire("orders", "a", LIVE, TIMEOUT).orElseThrow(),
						store.tryAcquire("invoices", "a", LIVE, TIMEOUT).orElseThrow());
				paused.command("CLIENT", "PAUSE", "3000");
				long start = System.nanoTime();
				assertThatExceptionOfType(LeaderElectionException.class)
					.isThrownBy(() -> store.renewAll(leases, LIVE, Duration.ofMillis(200)))
					.withMessageContaining("renew the leases of 2 groups")
					.withMessageContaining("within the call's timeout");
				assertThatExceptionOfType(LeaderElectionException.class)
					.isThrownBy(() -> store.readAll(List.of("orders", "invoices"), Duration.ofMillis(200)))
					.withMessageContaining("read the leases of 2 groups");
				assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
			}
			finally {
				pausedFactory.destroy();
			}
		}
	}

	private List<Lease> acquire(int count, String candidate) {
		List<Lease> leases = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			leases.add(this.store.tryAcquire("group-" + i, candidate, LIVE, TIMEOUT).orElseThrow());
		}
		return leases;
	}

	/** Lets the server learn the scripts, so that counts are not of its first answers. */
	private void warmUp(List<Lease> leases) {
		this.store.renewAll(leases.subList(0, 1), LIVE, TIMEOUT);
		this.store.readAll(groups(leases.subList(0, 1)), TIMEOUT);
	}

	private static List<String> groups(List<Lease> leases) {
		return leases.stream().map(Lease::group).toList();
	}

	/** The scripts the server ran, whole or by digest. */
	private static long scriptCalls() {
		return calls("eval") + calls("evalsha");
	}

	private static long calls(String command) {
		Matcher matcher = CALLS.matcher(server.command("INFO", "commandstats"));
		long calls = 0;
		while (matcher.find()) {
			if (matcher.group(1).equals(command)) {
				calls += Long.parseLong(matcher.group(2));
			}
		}
		return calls;
	}

}
