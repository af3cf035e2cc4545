package io.github.leaderelection.jdbc;

import java.util.Map;

import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.spi.LeaseStoreContractTests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Contract tests for {@link JdbcLeaseStore} on MariaDB or MySQL with a driver that counts changed
 * rather than matched rows.
 */
class AffectedRowsJdbcLeaseStoreTests extends LeaseStoreContractTests {

	private static ScratchTable table;

	@BeforeAll
	static void createTable() {
		table = ScratchTable.create(TestDatabases.mysqlFamily(Map.of("useAffectedRows", "true")));
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
