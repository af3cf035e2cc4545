package io.github.leaderelection.jdbc;

import java.util.Map;

import javax.sql.DataSource;

/**
 * Contract tests for {@link JdbcLeaseStore} on MariaDB or MySQL with a driver that counts changed
 * rather than matched rows.
 */
class AffectedRowsJdbcLeaseStoreTests extends JdbcLeaseStoreContractTests {

	@Override
	protected DataSource dataSource() {
		return TestDatabases.mysqlFamily(Map.of("useAffectedRows", "true"));
	}

}
