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
import io.github.leaderelection.testing.LocalRedisServer;
import io.github.leaderelection.testing.TestRedis;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The list of live candidates that balancing reads, on a standalone Redis of the test's
 * own (so that the counts of {@code INFO commandstats} are this test's alone): its keys,
 * what a keep-alive costs, and what it cleans out. Its rules are checked on the shared
 * server by {@link RedisLeaseStoreTests} and on a cluster by
 * {@link RedisClusterLeaseStoreTests}.
 */
class RedisLiveCandidatesTests {

	private static final Duration LIVE = Duration.ofSeconds(30);

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final Pattern CALLS = Pattern.compile("cmdstat_(\\w+):calls=(\\d+)");

	private static final AtomicInteger commandsSent = new AtomicInteger();

	private static LocalRedisServer server;

	private static LettuceConnectionFactory factory;

	private RedisLeaseStore store;

	private String candidates;

	private String weights;

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
		this.store = new RedisLeaseStore(factory, "live-" + UUID.randomUUID() + ":");
		this.candidates = this.store.candidatesKey("candidates");
		this.weights = this.store.candidatesKey("candidate-weights");
	}

	@Test
	void keepsTheListUnderThePrefixInTheHashSlotOfThePrefix() {
		RedisLeaseStore store = new RedisLeaseStore(factory, "app-1:");
		assertThat(store.candidatesKey("candidates")).isEqualTo("app-1:{app-1:}:candidates");
		assertThat(store.candidatesKey("candidate-weights")).isEqualTo("app-1:{app-1:}:candidate-weights");
		assertThat(SlotHash.getSlot(store.candidatesKey("candidate-weights")))
			.isEqualTo(SlotHash.getSlot(store.candidatesKey("candidates")))
			.isEqualTo(SlotHash.getSlot("app-1:"));
		assertThat(new RedisLeaseStore(factory).candidatesKey("candidates"))
			.isEqualTo("leader-election:{leader-election:}:candidates");
	}

	@Test
	void keepsACandidateAliveAndRemovesItWithOneScriptEach() {
		this.store.keepCandidateAlive("a", 1, LIVE, TIMEOUT); // the server learns the
																// scripts
		this.store.keepCandidateAlive("b", 3, LIVE, TIMEOUT);
		this.store.removeCandidate("nobody", TIMEOUT);
		long scripts = scriptCalls();
		int commands = commandsSent.get();
		assertThat(this.store.keepCandidateAlive("c", 2, LIVE, TIMEOUT))
			.containsExactlyInAnyOrderEntriesOf(Map.of("a", 1, "b", 3, "c", 2));
		assertThat(scriptCalls() - scripts).isOne();
		assertThat(commandsSent.get() - commands).isOne();
		scripts = scriptCalls();
		commands = commandsSent.get();
		this.store.removeCandidate("b", TIMEOUT);
		assertThat(scriptCalls() - scripts).isOne();
		assertThat(commandsSent.get() - commands).isOne();
		assertThat(server.command("ZSCORE", this.candidates, "b")).isEmpty();
		assertThat(server.command("HEXISTS", this.weights, "b")).isEqualTo(":0");
		assertThat(this.store.keepCandidateAlive("a", 1, LIVE, TIMEOUT)).containsOnlyKeys("a", "c");
	}

	/**
	 * The list decides who leads, never whether two may: a store that waits for replicas
	 * after acquire and renew does not wait after a keep-alive, and keeps its candidate
	 * alive on a server without replicas.
	 */
	@Test
	void neverWaitsForReplicas() {
		RedisLeaseStore store = new RedisLeaseStore(factory, "acked-" + UUID.randomUUID() + ":", 1,
				Duration.ofMillis(500));
		long waits = calls("wait");
		assertThat(store.keepCandidateAlive("a", 1, LIVE, TIMEOUT)).containsOnlyKeys("a");
		store.removeCandidate("a", TIMEOUT);
		assertThat(calls("wait") - waits).isZero();
	}

	@Test
	void deletesTheEntriesThatRanOut() {
		this.store.keepCandidateAlive("brief", 1, Duration.ofMillis(200), TIMEOUT);
		this.store.keepCandidateAlive("a", 2, LIVE, TIMEOUT);
		assertThat(server.command("HEXISTS", this.weights, "brief")).isEqualTo(":1");
		await().atMost(Duration.ofSeconds(5))
			.until(() -> !this.store.keepCandidateAlive("a", 2, LIVE, TIMEOUT).containsKey("brief"));
		assertThat(server.command("ZSCORE", this.candidates, "brief")).isEmpty();
		assertThat(server.command("HEXISTS", this.weights, "brief")).isEqualTo(":0");
		assertThat(server.command("ZCARD", this.candidates)).isEqualTo(":1");
		assertThat(server.command("HLEN", this.weights)).isEqualTo(":1");
	}

	/** Both keys last as long as the longest entry, whoever kept its entry last. */
	@Test
	void leavesNothingBehindOnceTheLastEntryRanOut() {
		this.store.keepCandidateAlive("long", 1, Duration.ofMillis(1500), TIMEOUT);
		this.store.keepCandidateAlive("short", 1, Duration.ofMillis(200), TIMEOUT);
		for (String key : List.of(this.candidates, this.weights)) {
			assertThat(Long.parseLong(server.command("PTTL", key).substring(1))).as(key).isBetween(1000L, 1500L);
		}
		await().atMost(Duration.ofSeconds(5))
			.until(() -> server.command("EXISTS", this.candidates, this.weights).equals(":0"));
	}

	/**
	 * After Redis lost the list, each candidate's next keep-alive writes its entry again
	 * (a weight lost alone leaves its candidate out until then).
	 */
	@Test
	void writesEachEntryAgainWithTheCandidatesNextKeepAliveAfterRedisLostThem() {
		this.store.keepCandidateAlive("a", 1, LIVE, TIMEOUT);
		this.store.keepCandidateAlive("b", 2, LIVE, TIMEOUT);
		this.store.keepCandidateAlive("c", 3, LIVE, TIMEOUT);
		server.command("HDEL", this.weights, "c");
		assertThat(this.store.keepCandidateAlive("a", 1, LIVE, TIMEOUT)).containsOnlyKeys("a", "b");
		server.command("DEL", this.candidates, this.weights);
		assertThat(this.store.keepCandidateAlive("a", 1, LIVE, TIMEOUT)).containsOnlyKeys("a");
		this.store.keepCandidateAlive("b", 2, LIVE, TIMEOUT);
		assertThat(this.store.keepCandidateAlive("c", 3, LIVE, TIMEOUT))
			.containsExactlyInAnyOrderEntriesOf(Map.of("a", 1, "b", 2, "c", 3));
	}

	/** More entries than Lua can pass to one command at once, expired and live. */
	@Test
	void listsAndCleansOutTensOfThousandsOfEntries() {
		int many = 10_000;
		List<String> expired = new ArrayList<>(List.of("ZADD", this.candidates));
		List<String> live = new ArrayList<>(List.of("ZADD", this.candidates));
		List<String> weights = new ArrayList<>(List.of("HSET", this.weights));
		for (int i = 0; i < many; i++) {
			expired.addAll(List.of("1", "gone-" + i));
			live.addAll(List.of("1e15", "live-" + i));
			weights.addAll(List.of("gone-" + i, "1", "live-" + i, "2"));
		}
		server.command(expired.toArray(String[]::new));
		server.command(live.toArray(String[]::new));
		server.command(weights.toArray(String[]::new));
		Map<String, Integer> listed = this.store.keepCandidateAlive("a", 5, LIVE, TIMEOUT);
		assertThat(listed).hasSize(many + 1)
			.containsEntry("a", 5)
			.containsEntry("live-0", 2)
			.doesNotContainKey("gone-0");
		assertThat(server.command("ZCARD", this.candidates)).isEqualTo(":" + (many + 1));
		assertThat(server.command("HLEN", this.weights)).isEqualTo(":" + (many + 1));
	}

	@Test
	void givesUpWithinTheCallTimeoutWhenRedisDoesNotAnswer() {
		this.store.keepCandidateAlive("a", 1, LIVE, TIMEOUT);
		server.command("CLIENT", "PAUSE", "3000", "WRITE"); // which holds back every
															// script
		try {
			long start = System.nanoTime();
			assertThatExceptionOfType(LeaderElectionException.class)
				.isThrownBy(() -> this.store.keepCandidateAlive("a", 1, LIVE, Duration.ofMillis(200)))
				.withMessageContaining("keep alive candidate 'a'")
				.withMessageContaining(this.candidates)
				.withMessageContaining("within the call's timeout");
			assertThatExceptionOfType(LeaderElectionException.class)
				.isThrownBy(() -> this.store.removeCandidate("a", Duration.ofMillis(200)))
				.withMessageContaining("remove candidate 'a'");
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
		}
		finally {
			server.command("CLIENT", "UNPAUSE");
		}
		// Answered after the scripts given up on, which therefore count in no other test.
		assertThat(this.store.keepCandidateAlive("a", 1, LIVE, TIMEOUT)).containsOnlyKeys("a");
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
