package io.github.leaderelection.jdbc;

import java.util.Map;

import javax.sql.DataSource;

import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.test.store.RunRecordStoreContractTests;
import io.github.leaderelection.testing.TestDatabases;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.TestInstance;

/**
 * The run record contract on every supported database, each in tables of its own that are
 * dropped afterwards.
 */
class JdbcRunRecordStoreTests {

	@Nested
	class OnH2 extends OnDatabase {

		@Override
		DataSource dataSource() {
			return TestDatabases.h2();
		}

	}

	@Nested
	class OnMariaDb extends OnDatabase {

		@Override
		DataSource dataSource() {
			return TestDatabases.mysqlFamily();
		}

	}

	@Nested
	class OnMariaDbCountingAffectedRows extends OnDatabase {

		@Override
		DataSource dataSource() {
			return TestDatabases.mysqlFamily(Map.of("useAffectedRows", "true"));
		}

	}

	@Nested
	class OnPostgres extends OnDatabase {

		@Override
		DataSource dataSource() {
			return TestDatabases.postgres();
		}

	}

	@TestInstance(TestInstance.Lifecycle.PER_CLASS)
	abstract static class OnDatabase extends RunRecordStoreContractTests {

		private ScratchTable table;

		abstract DataSource dataSource();

		@BeforeAll
		void createTables() {
			this.table = ScratchTable.create(dataSource());
		}

		@AfterAll
		void dropTables() {
			if (this.table != null) {
				this.table.drop();
			}
		}

		@Override
		protected LeaseStore createStore() {
			return this.table.store();
		}

	}

}
