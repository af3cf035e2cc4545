package io.github.leaderelection.jdbc;

import io.github.leaderelection.testing.TestDatabases;

import javax.sql.DataSource;

/**
 * Contract tests for {@link JdbcLeaseStore} on MariaDB or MySQL (see
 * {@link TestDatabases}).
 */
class MariaDbJdbcLeaseStoreTests extends JdbcLeaseStoreContractTests {

	@Override
	protected DataSource dataSource() {
		return TestDatabases.mysqlFamily();
	}

}
