package io.github.leaderelection.jdbc;

import javax.sql.DataSource;

import io.github.leaderelection.testing.TestDatabases;

/**
 * Contract tests for {@link JdbcLeaseStore} on MariaDB or MySQL taken for MariaDB 10.5,
 * which has no {@code JSON_TABLE}: the statements on many groups name them in lists, as
 * on the servers that old.
 */
class MariaDbWithoutJsonTableJdbcLeaseStoreTests extends JdbcLeaseStoreContractTests {

	@Override
	protected DataSource dataSource() {
		return new ReportedServerVersion(TestDatabases.mysqlFamily(), "10.5.27-MariaDB");
	}

}
