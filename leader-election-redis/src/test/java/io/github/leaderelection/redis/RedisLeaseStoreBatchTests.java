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
 * Acquiring, renewing and reading many groups at once on a standalone Redis: what it
 * costs, counted by the server ({@code INFO commandstats}) and by the client (the
 * commands Lettuce sends), and how it behaves when Redis lost a group's data, forgot its
 * scripts or does not answer. The server is the test's own, so that no other test's calls
 * (or {@code SCRIPT FLUSH}) disturb the counts; the rules of batches are checked on the
 * shared server by {@link RedisLeaseStoreTests}.
 */
class RedisLeaseStoreBatchTests {

	private static final Duration LIVE = Duration.ofSeconds(30);

	private static final Duration RENEWED = LIVE.plusSeconds(1);

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final Pattern CALLS = Pattern.compile("cmdstat_(eval|evalsha):calls=(\\d+),usec=(\\d+)");

	private static final AtomicInteger commandsSent = new AtomicInteger();

	private static LocalRedisServer server;

	private static LettuceConnectionFactory factory;

	private String prefix;

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
		this.prefix = "batch-" + UUID.randomUUID() + ":";
		this.store = new RedisLeaseStore(factory, this.prefix);
	}

	@Test
	void renewsAndReadsThreeHundredGroupsWithOneScriptAndOneCommandEach() {
		List<Lease> leases = acquire(300, "a");
		warmUp(leases);
		long scripts = scriptCalls();
		int commands = commandsSent.get();
		assertThat(this.store.renewAll(leases, RENEWED, TIMEOUT).keySet()).hasSize(300);
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

	/**
	 * What a node of a 10,000-group deployment on three nodes may hold, and more than the
	 * thousand groups a script used to take: the server sees one script per call.
	 */
	@Test
	void acquiresRenewsAndReadsSevenThousandGroupsWithOneScriptAndOneCommandEach() {
		warmUp(acquire(1, "a"));
		List<String> groups = newGroups(7000);
		long scripts = scriptCalls();
		int commands = commandsSent.get();
		Map<String, Lease> taken = this.store.tryAcquireAll(groups, "a", LIVE, TIMEOUT);
		assertThat(scriptCalls() - scripts).isOne();
		assertThat(commandsSent.get() - commands).isOne();
		assertThat(taken).containsOnlyKeys(groups);
		assertThat(taken.values()).allSatisfy((lease) -> {
			assertThat(lease.holder()).isEqualTo("a");
			assertThat(lease.activeIn()).isZero();
		});
		scripts = scriptCalls();
		commands = commandsSent.get();
		assertThat(this.store.renewAll(taken.values(), RENEWED, TIMEOUT).keySet()).containsExactlyElementsOf(groups);
		assertThat(scriptCalls() - scripts).isOne();
		assertThat(commandsSent.get() - commands).isOne();
		scripts = scriptCalls();
		commands = commandsSent.get();
		Map<String, Lease> read = this.store.readAll(groups, TIMEOUT);
		assertThat(scriptCalls() - scripts).isOne();
		assertThat(commandsSent.get() - commands).isOne();
		assertThat(read).containsOnlyKeys(groups);
		taken.forEach((group, lease) -> {
			assertThat(read.get(group).holder()).isEqualTo("a");
			assertThat(read.get(group).term()).isEqualTo(lease.term());
			assertThat(read.get(group).expiresIn()).isGreaterThan(LIVE);
		});
		// Refused groups cost no more: one script that takes nothing.
		scripts = scriptCalls();
		assertThat(new RedisLeaseStore(factory, this.prefix).tryAcquireAll(groups, "b", LIVE, TIMEOUT)).isEmpty();
		assertThat(scriptCalls() - scripts).isOne();
	}

	@Test
	void splitsBatchesOfMoreThanTheMostGroupsOfAScriptIntoScriptsOfThatMany() {
		warmUp(acquire(1, "a"));
		List<String> groups = newGroups(2 * LeaseScripts.MAX_GROUPS + 1);
		long before = scriptCalls();
		Map<String, Lease> taken = this.store.tryAcquireAll(groups, "a", LIVE, TIMEOUT);
		assertThat(scriptCalls() - before).isEqualTo(3);
		assertThat(taken).hasSize(groups.size());
		before = scriptCalls();
		assertThat(this.store.renewAll(taken.values(), RENEWED, TIMEOUT).keySet()).hasSize(groups.size());
		assertThat(scriptCalls() - before).isEqualTo(3);
		before = scriptCalls();
		Map<String, Lease> read = this.store.readAll(groups, TIMEOUT);
		assertThat(scriptCalls() - before).isEqualTo(3);
		assertThat(read).hasSize(groups.size());
		assertThat(read.values()).allMatch((lease) -> lease.expiresIn().compareTo(LIVE) > 0);
	}

	/**
	 * Redis serves nobody else while a script runs: the time the server spent on a
	 * renewal script of the most groups it takes, by its own count. That time (60 to 170
	 * ms on a two-CPU machine) is stated in the documentation; the bound only catches a
	 * script that grew far slower, such as one whose work grows faster than its groups.
	 */
	@Test
	void runsAScriptOfTheMostGroupsWellWithinTheRetryPeriod() {
		warmUp(acquire(1, "a"));
		Map<String, Lease> taken = this.store.tryAcquireAll(newGroups(LeaseScripts.MAX_GROUPS), "a", LIVE, TIMEOUT);
		long callsBefore = calls("evalsha");
		long microsBefore = micros("evalsha");
		assertThat(this.store.renewAll(taken.values(), RENEWED, TIMEOUT).keySet()).hasSize(LeaseScripts.MAX_GROUPS);
		assertThat(calls("evalsha") - callsBefore).isOne();
		Duration scriptTime = Duration.ofNanos((micros("evalsha") - microsBefore) * 1000);
		System.out.println("Redis renewal script of " + LeaseScripts.MAX_GROUPS + " groups: "
				+ scriptTime.toNanos() / 1000 + " us");
		assertThat(scriptTime).isLessThan(Duration.ofSeconds(1));
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
		assertThat(this.store.tryAcquireAll(List.of(), "a", LIVE, TIMEOUT)).isEmpty();
		assertThat(scriptCalls() - before).isZero();
		assertThat(commandsSent.get() - commands).isZero();
	}

	@Test
	void takesAGroupNamedTwiceInABatchOnce() {
		String group = newGroups(1).get(0);
		Map<String, Lease> taken = this.store.tryAcquireAll(List.of(group, group), "a", LIVE, TIMEOUT);
		assertThat(taken).containsOnlyKeys(group);
		assertThat(this.store.read(group, TIMEOUT).orElseThrow().term()).isEqualTo(taken.get(group).term());
	}

	/**
	 * As {@link RedisLeaseStore#tryAcquire}, group by group: a grant that cannot prove
	 * the previous lease over (the record this store saw is gone, or another Redis
	 * process wrote it) waits one lease duration and takes a term of at least Redis's
	 * microseconds; one it can prove, or of a group nobody here saw, is at once; a lease
	 * forced to the candidate is waited out.
	 */
	@Test
	void acquiresEachGroupOfABatchAsOneByOneWhenRedisLostItsData() {
		List<String> groups = newGroups(6);
		String vouched = groups.get(0);
		String lost = groups.get(1);
		String foreign = groups.get(2);
		String forced = groups.get(3);
		String held = groups.get(4);
		String lostUnseen = groups.get(5);
		Map<String, Lease> old = this.store.tryAcquireAll(groups.subList(0, 5), "b", LIVE, TIMEOUT);
		this.store.release(old.get(vouched), TIMEOUT);
		this.store.release(old.get(lost), TIMEOUT);
		this.store.release(old.get(foreign), TIMEOUT);
		server.command("DEL", this.store.key(lost, "lease"), this.store.key(lost, "term"));
		server.command("HSET", this.store.key(foreign, "term"), "server", "0123456789abcdef0123456789abcdef01234567");
		this.store.forceLeader(forced, "a", TIMEOUT);
		Lease unseen = new RedisLeaseStore(factory, this.prefix).tryAcquire(lostUnseen, "b", LIVE, TIMEOUT)
			.orElseThrow();
		server.command("DEL", this.store.key(lostUnseen, "lease"), this.store.key(lostUnseen, "term"));
		long serverMicros = Long.parseLong(server.command("EVAL", "return redis.call('TIME')[1]", "0")) * 1_000_000;
		Map<String, Lease> taken = this.store.tryAcquireAll(groups, "a", LIVE, TIMEOUT);
		assertThat(taken).containsOnlyKeys(vouched, lost, foreign, forced, lostUnseen);
		assertThat(taken.get(vouched).activeIn()).isZero();
		assertThat(taken.get(vouched).term()).isGreaterThan(old.get(vouched).term());
		for (String waiting : List.of(lost, foreign)) {
			assertThat(taken.get(waiting).activeIn()).as(waiting)
				.isGreaterThan(LIVE.minusSeconds(5))
				.isLessThanOrEqualTo(LIVE);
			assertThat(taken.get(waiting).term()).as(waiting)
				.isGreaterThan(old.get(waiting).term())
				.isGreaterThanOrEqualTo(serverMicros);
		}
		assertThat(taken.get(forced).activeIn()).isGreaterThan(LIVE.minusSeconds(5)).isLessThanOrEqualTo(LIVE);
		assertThat(taken.get(forced).term()).isGreaterThan(old.get(forced).term() + 1);
		assertThat(taken.get(lostUnseen).activeIn()).isZero();
		assertThat(taken.get(lostUnseen).term()).isGreaterThan(unseen.term());
		assertThat(this.store.read(held, TIMEOUT).orElseThrow().term()).isEqualTo(old.get(held).term());
		// The batch's terms count as seen: a record lost after it is known lost, even of
		// a group this store first saw in the batch.
		server.command("DEL", this.store.key(lostUnseen, "lease"), this.store.key(lostUnseen, "term"));
		assertThat(this.store.tryAcquire(lostUnseen, "c", LIVE, TIMEOUT).orElseThrow().activeIn())
			.isGreaterThan(LIVE.minusSeconds(5));
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
		assertThat(this.store.renewAll(leases, RENEWED, TIMEOUT).keySet()).containsExactly(leases.get(0).group(),
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
		assertThat(this.store.renewAll(leases, RENEWED, TIMEOUT).keySet()).hasSize(3);
		assertThat(this.store.readAll(groups(leases), TIMEOUT)).hasSize(3);
		assertThat(this.store.tryAcquireAll(newGroups(3), "a", LIVE, TIMEOUT)).hasSize(3);
		assertThat(calls("eval") - before).isEqualTo(3);
		before = scriptCalls();
		assertThat(this.store.renewAll(leases, RENEWED, TIMEOUT).keySet()).hasSize(3);
		assertThat(this.store.tryAcquireAll(newGroups(3), "a", LIVE, TIMEOUT)).hasSize(3);
		assertThat(scriptCalls() - before).isEqualTo(2);
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
				assertThatExceptionOfType(LeaderElectionException.class)
					.isThrownBy(
							() -> store.tryAcquireAll(List.of("orders", "invoices"), "b", LIVE, Duration.ofMillis(200)))
					.withMessageContaining("acquire the leases of 2 groups")
					.withMessageContaining("within the call's timeout");
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

	private static List<String> newGroups(int count) {
		String run = UUID.randomUUID().toString();
		List<String> groups = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			groups.add("group-" + run + "-" + i);
		}
		return groups;
	}

	/** Lets the server learn the scripts, so that counts are not of its first answers. */
	private void warmUp(List<Lease> leases) {
		this.store.renewAll(leases.subList(0, 1), LIVE, TIMEOUT);
		this.store.readAll(groups(leases.subList(0, 1)), TIMEOUT);
		this.store.tryAcquireAll(newGroups(1), "warm-up", LIVE, TIMEOUT);
	}

	private static List<String> groups(List<Lease> leases) {
		return leases.stream().map(Lease::group).toList();
	}

	/** The scripts the server ran, whole or by digest. */
	private static long scriptCalls() {
		return calls("eval") + calls("evalsha");
	}

	private static long calls(String command) {
		return commandStat(command, 2);
	}

	/** The microseconds the server spent on the command. */
	private static long micros(String command) {
		return commandStat(command, 3);
	}

	private static long commandStat(String command, int field) {
		Matcher matcher = CALLS.matcher(server.command("INFO", "commandstats"));
		long total = 0;
		while (matcher.find()) {
			if (matcher.group(1).equals(command)) {
				total += Long.parseLong(matcher.group(field));
			}
		}
		return total;
	}

}
