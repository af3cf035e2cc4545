package io.github.leaderelection.redis;

import io.github.leaderelection.testing.TestRedis;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.test.store.LeaseStoreContractTests;
import org.junit.jupiter.api.AfterAll;

/**
 * Contract tests for {@link RedisLeaseStore} on the shared test Redis (see
 * {@link TestRedis}). Each store stands for another node: it shares the storage, not its
 * memory of seen terms.
 */
class RedisLeaseStoreTests extends LeaseStoreContractTests {

	private static final String PREFIX = TestRedis.uniquePrefix();

	@AfterAll
	static void deleteKeys() {
		TestRedis.deleteKeys(PREFIX);
	}

	@Override
	protected RedisLeaseStore createStore() {
		return new RedisLeaseStore(TestRedis.shared(), PREFIX);
	}

	@Override
	protected LeaseStore createStoreWithIdentifier(String unsafeIdentifier) {
		return new RedisLeaseStore(TestRedis.shared(), unsafeIdentifier);
	}

}
