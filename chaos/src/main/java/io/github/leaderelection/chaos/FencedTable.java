package io.github.leaderelection.chaos;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

/**
 * The protected resource of the experiment: a table that only the leader of a group
 * appends to, guarded by a fence row per group, as in the sample application's
 * {@code JobRunLog}. A write raises its group's fence to its term in the same transaction
 * as the append, and is refused when a higher term of that group has written; with
 * fencing off it appends unconditionally, so that the checker sees what a stale leader
 * would do.
 */
final class FencedTable {

	/** The outcome of one write. */
	enum Outcome {

		ACCEPTED, REFUSED, ERROR;

		@Override
		public String toString() {
			return name().toLowerCase();
		}

	}

	/** One accepted write, in commit order of its group's fence. */
	record Write(long id, String nodeKey, String group, long term) {
	}

	/**
	 * After how long without a request the database ends a transaction, releasing the
	 * fence row's lock.
	 */
	static final int IDLE_TRANSACTION_SECONDS = 1;

	/**
	 * How long a write of a node whose links work may take at most: the lock of a writer
	 * that went quiet lasts {@link #IDLE_TRANSACTION_SECONDS}, plus a second for the
	 * write's own round trips on a busy machine.
	 */
	static final Duration HOLD_UP_BOUND = Duration.ofSeconds(IDLE_TRANSACTION_SECONDS + 1);

	/** How long a write holds the fence row's lock before it appends its row. */
	static final long IN_TRANSACTION_MILLIS = 60;

	private final DataSource dataSource;

	private final boolean fencing;

	FencedTable(DataSource dataSource, boolean fencing) {
		this.dataSource = dataSource;
		this.fencing = fencing;
	}

	/**
	 * Creates (or empties) the two tables, with a fence row per group; run by the harness
	 * before the nodes start.
	 */
	static void create(String jdbcUrl, String user, List<String> groups) throws SQLException {
		boolean postgres = jdbcUrl.startsWith("jdbc:postgresql:");
		try (Connection connection = DriverManager.getConnection(jdbcUrl, user, "");
				Statement statement = connection.createStatement()) {
			statement.execute("DROP TABLE IF EXISTS chaos_write");
			statement.execute("DROP TABLE IF EXISTS chaos_fence");
			statement
				.execute("CREATE TABLE chaos_fence (group_name VARCHAR(64) PRIMARY KEY, max_term BIGINT NOT NULL)");
			try (PreparedStatement insert = connection
				.prepareStatement("INSERT INTO chaos_fence (group_name, max_term) VALUES (?, 0)")) {
				for (String group : groups) {
					insert.setString(1, group);
					insert.executeUpdate();
				}
			}
			statement.execute(postgres
					? "CREATE TABLE chaos_write (id BIGSERIAL PRIMARY KEY, node_key VARCHAR(64) NOT NULL, "
							+ "group_name VARCHAR(64) NOT NULL, term BIGINT NOT NULL)"
					: "CREATE TABLE chaos_write (id BIGINT AUTO_INCREMENT PRIMARY KEY, node_key VARCHAR(64) NOT NULL, "
							+ "group_name VARCHAR(64) NOT NULL, term BIGINT NOT NULL) ENGINE=InnoDB");
		}
	}

	/** Every accepted write, in the order the fences admitted them. */
	static List<Write> readWrites(String jdbcUrl, String user) throws SQLException {
		List<Write> writes = new ArrayList<>();
		try (Connection connection = DriverManager.getConnection(jdbcUrl, user, "");
				Statement statement = connection.createStatement();
				ResultSet rows = statement
					.executeQuery("SELECT id, node_key, group_name, term FROM chaos_write ORDER BY id")) {
			while (rows.next()) {
				writes.add(new Write(rows.getLong(1), rows.getString(2), rows.getString(3), rows.getLong(4)));
			}
		}
		return writes;
	}

	/**
	 * Appends one row for the node in the given group and term.
	 */
	Outcome write(String nodeKey, String group, long term) {
		try (Connection connection = this.dataSource.getConnection()) {
			connection.setAutoCommit(false);
			try {
				if (this.fencing) {
					// The fence row's lock orders the group's writers: once a term has
					// written, lower ones fail.
					try (PreparedStatement fence = connection.prepareStatement(
							"UPDATE chaos_fence SET max_term = ? WHERE group_name = ? AND max_term <= ?")) {
						fence.setLong(1, term);
						fence.setString(2, group);
						fence.setLong(3, term);
						if (fence.executeUpdate() == 0) {
							connection.rollback();
							return Outcome.REFUSED;
						}
					}
				}
				// Work inside the transaction, as a real job does between taking the
				// fence and writing: a link that fails meanwhile leaves the lock held.
				pause(IN_TRANSACTION_MILLIS);
				try (PreparedStatement append = connection
					.prepareStatement("INSERT INTO chaos_write (node_key, group_name, term) VALUES (?, ?, ?)")) {
					append.setString(1, nodeKey);
					append.setString(2, group);
					append.setLong(3, term);
					append.executeUpdate();
				}
				connection.commit();
				return Outcome.ACCEPTED;
			}
			catch (SQLException ex) {
				try {
					connection.rollback();
				}
				catch (SQLException ignored) {
					// The connection is broken; the pool discards it.
				}
				return Outcome.ERROR;
			}
		}
		catch (SQLException ex) {
			return Outcome.ERROR;
		}
	}

	private static void pause(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
