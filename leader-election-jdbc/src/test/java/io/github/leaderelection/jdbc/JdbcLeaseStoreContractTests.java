package io.github.leaderelection.jdbc;

import javax.sql.DataSource;

import io.github.leaderelection.testing.TestDatabases;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.test.store.LeaseStoreContractTests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * The store contract on one database, in a table of its own that is dropped afterwards; a
 * subclass only says which database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcLeaseStoreContractTests extends LeaseStoreContractTests {

	private ScratchTable table;

	/** The database to test on (see {@link TestDatabases}). */
	protected abstract DataSource dataSource();

	@BeforeAll
	void createTable() {
		this.table = ScratchTable.create(dataSource());
	}

	@AfterAll
	void dropTable() {
		if (this.table != null) {
			this.table.drop();
		}
	}

	@Override
	protected LeaseStore createStore() {
		return this.table.store();
	}

	@Override
	protected LeaseStore createStoreWithIdentifier(String unsafeIdentifier) {
		return new JdbcLeaseStore(this.table.dataSource(), unsafeIdentifier);
	}

}
