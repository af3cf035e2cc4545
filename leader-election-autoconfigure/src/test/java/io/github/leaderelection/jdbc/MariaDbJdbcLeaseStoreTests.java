package io.github.leaderelection.jdbc;

import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.spi.LeaseStoreContractTests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Contract tests for {@link JdbcLeaseStore} on MariaDB or MySQL (see {@link TestDatabases}).
 */
class MariaDbJdbcLeaseStoreTests extends LeaseStoreContractTests {

	private static ScratchTable table;

	@BeforeAll
	static void createTable() {
		table = ScratchTable.create(TestDatabases.mysqlFamily());
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
