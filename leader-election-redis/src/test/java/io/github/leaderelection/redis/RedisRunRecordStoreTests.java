package io.github.leaderelection.redis;

import io.github.leaderelection.test.store.RunRecordStoreContractTests;
import io.github.leaderelection.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;

/**
 * Run record contract tests for {@link RedisLeaseStore} on the shared test Redis (see
 * {@link TestRedis}).
 */
class RedisRunRecordStoreTests extends RunRecordStoreContractTests {

	private static final String PREFIX = TestRedis.uniquePrefix();

	@AfterAll
	static void deleteKeys() {
		TestRedis.deleteKeys(PREFIX);
	}

	@Override
	protected RedisLeaseStore createStore() {
		return new RedisLeaseStore(TestRedis.shared(), PREFIX);
	}

}
