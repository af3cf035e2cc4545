package io.github.leaderelection.jdbc;

import io.github.leaderelection.testing.TestDatabases;

import javax.sql.DataSource;

/**
 * Contract tests for {@link JdbcLeaseStore} on an in-process H2 database.
 */
class H2JdbcLeaseStoreTests extends JdbcLeaseStoreContractTests {

	@Override
	protected DataSource dataSource() {
		return TestDatabases.h2();
	}

}
