package io.github.leaderelection.chaos;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.github.leaderelection.testing.StoreServer;

/**
 * The lease table of the JDBC store, changed with plain SQL. Rows are copied column by
 * column as the database describes them, so that a column added to the table is copied
 * and restored too.
 */
final class JdbcStoreData implements StoreData {

	/** The table the harness creates ({@code JdbcLeaseStore}'s default name). */
	static final String TABLE = "leader_election";

	private static final int TIMEOUT_SECONDS = 5;

	private final StoreServer store;

	private Connection connection;

	JdbcStoreData(StoreServer store) {
		this.store = store;
	}

	/**
	 * A new connection each time, to the primary wherever a failover put it: the one
	 * before may have broken with a restart of the server.
	 */
	@Override
	public void connect() throws SQLException {
		close();
		this.connection = DriverManager.getConnection(this.store.jdbcUrl(), this.store.jdbcUser(), "");
	}

	@Override
	public void close() throws SQLException {
		if (this.connection != null) {
			Connection open = this.connection;
			this.connection = null;
			open.close();
		}
	}

	@Override
	public Copy copy() throws SQLException {
		List<Map<String, Object>> rows = new ArrayList<>();
		try (Statement statement = statement(this.connection);
				ResultSet result = statement.executeQuery("SELECT * FROM " + TABLE)) {
			ResultSetMetaData columns = result.getMetaData();
			while (result.next()) {
				Map<String, Object> row = new LinkedHashMap<>();
				for (int i = 1; i <= columns.getColumnCount(); i++) {
					row.put(columns.getColumnName(i), result.getObject(i));
				}
				rows.add(row);
			}
		}
		return new Rows(rows);
	}

	@Override
	public String restore(Copy copy) throws SQLException {
		List<Map<String, Object>> rows = ((Rows) copy).rows();
		Connection connection = this.connection;
		// One transaction: the nodes see the table as it was, or as the copy has it.
		connection.setAutoCommit(false);
		try {
			try (Statement statement = statement(connection)) {
				statement.executeUpdate("DELETE FROM " + TABLE);
			}
			for (Map<String, Object> row : rows) {
				String names = String.join(", ", row.keySet());
				String marks = row.keySet().stream().map((name) -> "?").collect(Collectors.joining(", "));
				try (PreparedStatement insert = connection
					.prepareStatement("INSERT INTO " + TABLE + " (" + names + ") VALUES (" + marks + ")")) {
					insert.setQueryTimeout(TIMEOUT_SECONDS);
					int index = 1;
					for (Object value : row.values()) {
						insert.setObject(index++, value);
					}
					insert.executeUpdate();
				}
			}
			connection.commit();
		}
		catch (SQLException | RuntimeException ex) {
			connection.rollback();
			throw ex;
		}
		finally {
			connection.setAutoCommit(true);
		}
		return "restored-" + rows.size() + "-rows";
	}

	@Override
	public String deleteGroup(String group, boolean leaseToo) throws SQLException {
		try (PreparedStatement delete = this.connection
			.prepareStatement("DELETE FROM " + TABLE + " WHERE group_name = ?")) {
			delete.setQueryTimeout(TIMEOUT_SECONDS);
			delete.setString(1, group);
			return "deleted-" + delete.executeUpdate() + "-rows-of-" + group;
		}
	}

	@Override
	public String wipe(boolean drastic) throws SQLException {
		try (Statement statement = statement(this.connection)) {
			if (drastic) {
				statement.execute("TRUNCATE TABLE " + TABLE);
				return "truncated";
			}
			return "deleted-" + statement.executeUpdate("DELETE FROM " + TABLE) + "-rows";
		}
	}

	@Override
	public String lowerTerm(String group, long by) throws SQLException {
		Connection connection = this.connection;
		long term;
		try (PreparedStatement read = connection
			.prepareStatement("SELECT term FROM " + TABLE + " WHERE group_name = ?")) {
			read.setQueryTimeout(TIMEOUT_SECONDS);
			read.setString(1, group);
			try (ResultSet result = read.executeQuery()) {
				if (!result.next()) {
					return "no-record-of-" + group;
				}
				term = result.getLong(1);
			}
		}
		long lowered = Math.max(0, term - by);
		// Only over the term read: a grant in between keeps its term, and the
		// record says so.
		try (PreparedStatement update = connection
			.prepareStatement("UPDATE " + TABLE + " SET term = ? WHERE group_name = ? AND term = ?")) {
			update.setQueryTimeout(TIMEOUT_SECONDS);
			update.setLong(1, lowered);
			update.setString(2, group);
			update.setLong(3, term);
			if (update.executeUpdate() == 0) {
				return "term-of-" + group + "-changed-meanwhile";
			}
		}
		return "term-of-" + group + "-from-" + term + "-to-" + lowered;
	}

	private static Statement statement(Connection connection) throws SQLException {
		Statement statement = connection.createStatement();
		statement.setQueryTimeout(TIMEOUT_SECONDS);
		return statement;
	}

	private record Rows(List<Map<String, Object>> rows) implements Copy {

		@Override
		public int size() {
			return this.rows.size();
		}

	}

}
