package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;

import javax.sql.DataSource;

import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.test.store.LostStoreDataContractTests;
import io.github.leaderelection.testing.TestDatabases;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.TestInstance;

/**
 * A lost lease row on every supported database: rows deleted, older rows restored and
 * terms lowered with plain SQL, as an operator or a restore would.
 */
class JdbcLostStoreDataTests {

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
	class OnMariaDbWithoutJsonTable extends OnDatabase {

		@Override
		DataSource dataSource() {
			return new ReportedServerVersion(TestDatabases.mysqlFamily(), "10.5.27-MariaDB");
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
	abstract static class OnDatabase extends LostStoreDataContractTests {

		private ScratchTable table;

		abstract DataSource dataSource();

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
		protected void delete(List<String> groups) {
			for (String group : groups) {
				update("DELETE FROM " + this.table.name() + " WHERE group_name = ?", group);
			}
		}

		@Override
		protected Object copy(String group) {
			try (Connection connection = this.table.dataSource().getConnection();
					PreparedStatement statement = connection.prepareStatement("SELECT holder_id, term, "
							+ "active_from_ms, lease_until_ms FROM " + this.table.name() + " WHERE group_name = ?")) {
				statement.setString(1, group);
				try (ResultSet row = statement.executeQuery()) {
					row.next();
					return new Object[] { row.getString(1), row.getLong(2), row.getLong(3), row.getLong(4) };
				}
			}
			catch (SQLException ex) {
				throw new IllegalStateException(ex);
			}
		}

		@Override
		protected void restore(String group, Object copy) {
			Object[] row = (Object[]) copy;
			update("UPDATE " + this.table.name() + " SET holder_id = ?, term = ?, active_from_ms = ?, "
					+ "lease_until_ms = ? WHERE group_name = ?", row[0], row[1], row[2], row[3], group);
		}

		@Override
		protected void setTerm(String group, long term) {
			update("UPDATE " + this.table.name() + " SET term = ? WHERE group_name = ?", term, group);
		}

		@Override
		protected void setHolder(String group, String holder) {
			update("UPDATE " + this.table.name() + " SET holder_id = ?, active_from_ms = 0, lease_until_ms = 0 "
					+ "WHERE group_name = ?", holder, group);
		}

		private void update(String sql, Object... parameters) {
			try (Connection connection = this.table.dataSource().getConnection();
					PreparedStatement statement = connection.prepareStatement(sql)) {
				for (int i = 0; i < parameters.length; i++) {
					statement.setObject(i + 1, parameters[i]);
				}
				statement.executeUpdate();
			}
			catch (SQLException ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

}
