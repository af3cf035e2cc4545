package io.github.leaderelection.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.test.store.LostStoreDataContractTests;
import io.github.leaderelection.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;

import org.springframework.data.redis.connection.RedisConnection;

/**
 * A lost record in Redis: keys deleted, an older record written back and terms lowered
 * with plain commands, as an operator, a flush or a restore from an older snapshot would.
 */
class RedisLostStoreDataTests extends LostStoreDataContractTests {

	private static final String PREFIX = TestRedis.uniquePrefix();

	private static final RedisLeaseStore KEYS = new RedisLeaseStore(TestRedis.shared(), PREFIX);

	@AfterAll
	static void deleteKeys() {
		TestRedis.deleteKeys(PREFIX);
	}

	@Override
	protected RedisLeaseStore createStore() {
		return new RedisLeaseStore(TestRedis.shared(), PREFIX);
	}

	@Override
	protected void delete(List<String> groups) {
		try (RedisConnection connection = TestRedis.shared().getConnection()) {
			for (String group : groups) {
				connection.keyCommands().del(key(group, "lease"), key(group, "term"));
			}
		}
	}

	@Override
	protected Object copy(String group) {
		try (RedisConnection connection = TestRedis.shared().getConnection()) {
			return connection.hashCommands().hGetAll(key(group, "term"));
		}
	}

	@Override
	@SuppressWarnings("unchecked")
	protected void restore(String group, Object copy) {
		try (RedisConnection connection = TestRedis.shared().getConnection()) {
			connection.keyCommands().del(key(group, "lease"), key(group, "term"));
			connection.hashCommands().hMSet(key(group, "term"), (Map<byte[], byte[]>) copy);
		}
	}

	@Override
	protected void setTerm(String group, long term) {
		try (RedisConnection connection = TestRedis.shared().getConnection()) {
			connection.hashCommands().hSet(key(group, "term"), bytes("term"), bytes(Long.toString(term)));
		}
	}

	@Override
	protected void setHolder(String group, String holder) {
		try (RedisConnection connection = TestRedis.shared().getConnection()) {
			connection.keyCommands().del(key(group, "lease"));
			connection.hashCommands()
				.hMSet(key(group, "term"), Map.of(bytes("holder"), bytes(holder), bytes("lease_end"), bytes("0"),
						bytes("active_from"), bytes("0")));
		}
	}

	private static byte[] key(String group, String suffix) {
		return bytes(KEYS.key(group, suffix));
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

}
