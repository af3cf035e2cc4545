package io.github.leaderelection.jdbc;

import io.github.leaderelection.testing.TestDatabases;

import javax.sql.DataSource;

/**
 * Contract tests for {@link JdbcLeaseStore} on PostgreSQL (see {@link TestDatabases}).
 */
class PostgresJdbcLeaseStoreTests extends JdbcLeaseStoreContractTests {

	@Override
	protected DataSource dataSource() {
		return TestDatabases.postgres();
	}

}
