package io.github.leaderelection.test.store;

import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.LeaseStore;

/**
 * Run record contract tests for {@link InMemoryLeaseStore}.
 */
class InMemoryRunRecordStoreTests extends RunRecordStoreContractTests {

	private final InMemoryLeaseStore store = new InMemoryLeaseStore();

	@Override
	protected LeaseStore createStore() {
		return this.store;
	}

}
