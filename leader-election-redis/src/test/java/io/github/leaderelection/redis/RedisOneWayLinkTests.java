package io.github.leaderelection.redis;

import java.time.Duration;

import io.github.leaderelection.testing.TestRedis;
import io.github.leaderelection.testing.TcpProxy;

import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.spi.Lease;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A leader that no longer hears from Redis gives up and releases over the same link: the
 * release must land even though no answer comes back (issue 17, found by the harness's
 * one-way link fault). It did not after a Redis restart: the release went out as
 * {@code EVALSHA}, Redis answered NOSCRIPT (its script cache was empty), and the answer
 * that would have made the store send the script itself never arrived.
 */
class RedisOneWayLinkTests {

	private static final String PREFIX = TestRedis.uniquePrefix();

	@AfterAll
	static void deleteKeys() {
		TestRedis.deleteKeys(PREFIX);
	}

	@Test
	void aReleaseLandsOverALinkThatNoLongerAnswersEvenWithAnEmptyScriptCache() throws Exception {
		LettuceConnectionFactory shared = TestRedis.shared();
		try (TcpProxy link = new TcpProxy(shared.getPort())) {
			LettuceConnectionFactory viaLink = TestRedis
				.connect(new RedisStandaloneConfiguration(shared.getHostName(), link.port()));
			try {
				RedisLeaseStore leader = new RedisLeaseStore(viaLink, PREFIX);
				RedisLeaseStore observer = new RedisLeaseStore(shared, PREFIX);
				Lease lease = leader.tryAcquire("orders", "a", Duration.ofSeconds(30), Duration.ofSeconds(5))
					.orElseThrow();
				try (RedisConnection connection = shared.getConnection()) {
					connection.scriptingCommands().scriptFlush(); // as after a restart
				}
				link.holdAnswers();
				assertThatExceptionOfType(LeaderElectionException.class)
					.isThrownBy(() -> leader.release(lease, Duration.ofMillis(500)));
				await().atMost(Duration.ofSeconds(5))
					.until(() -> observer.read("orders", Duration.ofSeconds(1)).orElseThrow().holder() == null);
			}
			finally {
				link.heal();
				viaLink.destroy();
			}
		}
	}

}
