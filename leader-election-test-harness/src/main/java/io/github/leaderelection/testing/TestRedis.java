package io.github.leaderelection.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * The shared Redis the store tests run on, resolved once per JVM: the URI in
 * {@value #URL_VARIABLE}, else a Testcontainers container when Docker is available, else
 * the server on 127.0.0.1:6379. None answering fails the tests. Tests share it with
 * others: they use key prefixes of their own, delete only their keys and never flush it.
 */
public final class TestRedis {

	public static final String URL_VARIABLE = "LEADER_ELECTION_TEST_REDIS_URL";

	private static final String LOCAL = "redis://127.0.0.1:6379";

	private static LettuceConnectionFactory shared;

	private TestRedis() {
	}

	/** A connection factory to the shared test Redis. */
	public static synchronized LettuceConnectionFactory shared() {
		if (shared == null) {
			shared = resolve();
		}
		return shared;
	}

	/** A key prefix no other test uses. */
	public static String uniquePrefix() {
		return "le-test-" + UUID.randomUUID().toString().substring(0, 8) + ":";
	}

	/** Deletes every key of the shared Redis that starts with the prefix. */
	public static void deleteKeys(String prefix) {
		try (RedisConnection connection = shared().getConnection()) {
			List<byte[]> keys = new ArrayList<>();
			try (Cursor<byte[]> cursor = connection.keyCommands()
				.scan(ScanOptions.scanOptions().match(prefix + "*").count(1000).build())) {
				cursor.forEachRemaining(keys::add);
			}
			if (!keys.isEmpty()) {
				connection.keyCommands().del(keys.toArray(new byte[0][]));
			}
		}
	}

	/** A started connection factory; the caller destroys it. */
	public static LettuceConnectionFactory connect(RedisConfiguration configuration) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration,
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(10)).build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private static LettuceConnectionFactory resolve() {
		String url = System.getenv(URL_VARIABLE);
		if (url != null && !url.isBlank()) {
			return check(url, "The Redis named by " + URL_VARIABLE + " did not answer; fix or unset the variable");
		}
		if (DockerClientFactory.instance().isDockerAvailable()) {
			GenericContainer<?> container = new GenericContainer<>(DockerImageName.parse("redis:7-alpine"))
				.withExposedPorts(6379);
			container.start();
			return check("redis://" + container.getHost() + ":" + container.getMappedPort(6379),
					"The Redis test container did not answer");
		}
		return check(LOCAL,
				"No Redis answered at " + LOCAL + ". Provide one: set " + URL_VARIABLE
						+ " to a redis:// URI, or start a Docker engine for Testcontainers, or run redis-server on "
						+ "127.0.0.1:6379");
	}

	private static LettuceConnectionFactory check(String url, String failure) {
		LettuceConnectionFactory factory = connect(LettuceConnectionFactory.createRedisConfiguration(url));
		try (RedisConnection connection = factory.getConnection()) {
			connection.ping();
			return factory;
		}
		catch (RuntimeException ex) {
			factory.destroy();
			return fail(failure + " (" + ex.getMessage() + ")", ex);
		}
	}

}
