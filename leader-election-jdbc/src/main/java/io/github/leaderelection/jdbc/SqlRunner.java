package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLTimeoutException;
import java.time.Duration;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs statements on connections borrowed from a data source, bounded by a timeout and
 * leaving no session state behind, so that any connection pool can serve them.
 */
final class SqlRunner {

	private static final Logger logger = LoggerFactory.getLogger(SqlRunner.class);

	private final DataSource dataSource;

	SqlRunner(DataSource dataSource) {
		this.dataSource = dataSource;
	}

	/**
	 * Runs the work on a borrowed connection in auto-commit mode (a pool may hand out
	 * connections without it, and would then roll our writes back), restoring what it
	 * changed.
	 * @param timeout the bound for every socket read, or {@code null} for the
	 * connection's own
	 */
	<T> T run(@Nullable Duration timeout, Work<T> work) throws SQLException {
		try (Connection connection = this.dataSource.getConnection()) {
			boolean autoCommit = connection.getAutoCommit();
			Integer networkTimeout = (timeout != null) ? setNetworkTimeout(connection, timeout) : null;
			try {
				if (!autoCommit) {
					connection.setAutoCommit(true);
				}
				return work.run(connection);
			}
			finally {
				restore(connection, autoCommit, networkTimeout);
			}
		}
	}

	/**
	 * Runs the call in one transaction on a connection in auto-commit mode, and returns
	 * to it.
	 */
	static <T> T transaction(Connection connection, Call<T> call) throws SQLException {
		connection.setAutoCommit(false);
		T result;
		try {
			result = call.call();
			connection.commit();
		}
		catch (SQLException | RuntimeException ex) {
			try {
				connection.rollback();
				connection.setAutoCommit(true);
			}
			catch (SQLException cleanupFailure) {
				ex.addSuppressed(cleanupFailure);
			}
			throw ex;
		}
		connection.setAutoCommit(true);
		return result;
	}

	static int update(Connection connection, String sql, Duration timeout, Object... parameters) throws SQLException {
		try (PreparedStatement statement = prepare(connection, sql, timeout, parameters)) {
			return statement.executeUpdate();
		}
	}

	static PreparedStatement prepare(Connection connection, String sql, Duration timeout, Object... parameters)
			throws SQLException {
		PreparedStatement statement = connection.prepareStatement(sql);
		try {
			long seconds = timeout.toSeconds() + ((timeout.toNanosPart() > 0) ? 1 : 0);
			statement.setQueryTimeout((int) Math.min(Integer.MAX_VALUE, Math.max(1, seconds)));
			for (int i = 0; i < parameters.length; i++) {
				bind(connection, statement, i + 1, parameters[i]);
			}
			return statement;
		}
		catch (SQLException ex) {
			statement.close();
			throw ex;
		}
	}

	/**
	 * Binds a value: a {@code String[]} or {@code Long[]} as an SQL array of {@code text}
	 * or {@code bigint} (PostgreSQL's names), anything else as it is.
	 */
	private static void bind(Connection connection, PreparedStatement statement, int index, Object value)
			throws SQLException {
		if (value instanceof String[] strings) {
			statement.setArray(index, connection.createArrayOf("text", strings));
		}
		else if (value instanceof Long[] longs) {
			statement.setArray(index, connection.createArrayOf("bigint", longs));
		}
		else {
			statement.setObject(index, value);
		}
	}

	/**
	 * Returns what is left of a call's timeout, given its deadline on the
	 * {@link System#nanoTime()} clock, for the call's next statement, and bounds socket
	 * reads by it too: a call of several statements then ends within its one timeout.
	 * @throws SQLTimeoutException if nothing is left
	 */
	static Duration remaining(Connection connection, long deadline) throws SQLException {
		long left = deadline - System.nanoTime();
		if (left <= 0) {
			throw new SQLTimeoutException("The call timeout passed before its next statement");
		}
		Duration remaining = Duration.ofNanos(left);
		setNetworkTimeout(connection, remaining);
		return remaining;
	}

	/**
	 * Bounds every socket read by the timeout, for a database that stopped answering (a
	 * query timeout needs a live server to cancel). Returns the previous value, or
	 * {@code null} when the driver has no such setting.
	 */
	private static @Nullable Integer setNetworkTimeout(Connection connection, Duration timeout) throws SQLException {
		try {
			int previous = connection.getNetworkTimeout();
			int millis = (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis()));
			connection.setNetworkTimeout(Runnable::run, millis);
			return previous;
		}
		catch (SQLFeatureNotSupportedException ex) {
			return null;
		}
	}

	private static void restore(Connection connection, boolean autoCommit, @Nullable Integer networkTimeout) {
		try {
			if (!autoCommit) {
				connection.setAutoCommit(false);
			}
			if (networkTimeout != null) {
				connection.setNetworkTimeout(Runnable::run, networkTimeout);
			}
		}
		catch (SQLException ex) {
			// Only a broken connection refuses this, and the pool discards it. The caller
			// must hear the outcome of its work: work that took effect must not be
			// reported as failed.
			logger.debug("Could not restore the settings of a borrowed connection", ex);
		}
	}

	@FunctionalInterface
	interface Work<T> {

		T run(Connection connection) throws SQLException;

	}

	@FunctionalInterface
	interface Call<T> {

		T call() throws SQLException;

	}

}
