package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

import javax.sql.DataSource;

/**
 * A lease table of a test's own, and its candidates table, to drop when the test is done.
 */
record ScratchTable(DataSource dataSource, String name) {

	static ScratchTable create(DataSource dataSource) {
		ScratchTable table = new ScratchTable(dataSource, uniqueName());
		table.store().createTableIfMissing();
		return table;
	}

	static String uniqueName() {
		return "leader_election_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
	}

	JdbcLeaseStore store() {
		return new JdbcLeaseStore(this.dataSource, this.name);
	}

	void drop() {
		drop(this.dataSource, this.name);
	}

	/** Drops a store's lease table and the tables named after it, if they exist. */
	static void drop(DataSource dataSource, String name) {
		execute(dataSource, "DROP TABLE IF EXISTS " + name);
		execute(dataSource, "DROP TABLE IF EXISTS " + TableName.candidates(name));
		execute(dataSource, "DROP TABLE IF EXISTS " + TableName.runs(name));
	}

	static void execute(DataSource dataSource, String sql) {
		try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Could not run " + sql, ex);
		}
	}

}
