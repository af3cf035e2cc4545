package io.github.leaderelection.jdbc;

import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.spi.LeaseStoreContractTests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Contract tests for {@link JdbcLeaseStore} on an in-process H2 database.
 */
class H2JdbcLeaseStoreTests extends LeaseStoreContractTests {

	private static ScratchTable table;

	@BeforeAll
	static void createTable() {
		table = ScratchTable.create(TestDatabases.h2());
	}

	@AfterAll
	static void dropTable() {
		if (table != null) {
			table.drop();
		}
	}

	@Override
	protected LeaseStore createStore() {
		return table.store();
	}

	@Override
	protected LeaseStore createStoreWithIdentifier(String unsafeIdentifier) {
		return new JdbcLeaseStore(table.dataSource(), unsafeIdentifier);
	}

}
