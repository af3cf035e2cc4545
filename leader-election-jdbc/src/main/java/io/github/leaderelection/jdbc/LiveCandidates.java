package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.github.leaderelection.jdbc.LeaseSql.CandidateSql;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static io.github.leaderelection.jdbc.SqlRunner.prepare;
import static io.github.leaderelection.jdbc.SqlRunner.remaining;
import static io.github.leaderelection.jdbc.SqlRunner.update;

/**
 * The work of {@link JdbcLeaseStore} on the list of live candidates that balancing reads:
 * a table next to the lease table with one row per candidate, its weight and the end of
 * its entry by the database clock. A missing table is reported with the statement that
 * creates it: the lease table's check does not cover it, because only balancing needs it.
 */
final class LiveCandidates {

	/**
	 * How long past its end an entry stays before a caller deletes it. Deleting an entry
	 * that ran out changes no answer (it counts as absent either way), so this only keeps
	 * the table small, without writing at every brief outage of a candidate.
	 */
	static final Duration REMOVAL_DELAY = Duration.ofMinutes(10);

	/** The most run-out entries one call deletes, so that its extra work is bounded. */
	static final int MAX_REMOVED_PER_CALL = 100;

	private static final Logger logger = LoggerFactory.getLogger(LiveCandidates.class);

	private LiveCandidates() {
	}

	/**
	 * Writes the candidate's entry and returns every entry that has not run out, this one
	 * included: one statement where the database can write and read in one (PostgreSQL,
	 * H2), two elsewhere, and one more when entries ran out long ago, to delete them.
	 * @param deadline the end of the call on the {@link System#nanoTime()} clock
	 */
	static Map<String, Integer> keepAlive(Connection connection, CandidateSql sql, String candidateId, int weight,
			long ttlMillis, long deadline) throws SQLException {
		Map<String, Integer> live = new TreeMap<>();
		List<String> expired = new ArrayList<>();
		try {
			Object[] parameters = sql.keepAliveParameters(candidateId, weight, ttlMillis);
			String list = sql.list();
			if (list == null) {
				try (PreparedStatement statement = prepare(connection, sql.keepAlive(), remaining(connection, deadline),
						parameters); ResultSet rows = statement.executeQuery()) {
					read(rows, live, expired);
				}
			}
			else {
				update(connection, sql.keepAlive(), remaining(connection, deadline), parameters);
				try (PreparedStatement statement = prepare(connection, list, remaining(connection, deadline));
						ResultSet rows = statement.executeQuery()) {
					read(rows, live, expired);
				}
			}
		}
		catch (SQLException ex) {
			reportMissingTable(sql, ex);
			throw ex;
		}
		// Written just now, it counts even when its time to live was shorter than the
		// statement.
		live.put(candidateId, weight);
		expired.remove(candidateId);
		if (!expired.isEmpty()) {
			removeExpired(connection, sql, expired, deadline);
		}
		return live;
	}

	/** Deletes the candidate's entry, if it has one. */
	static void remove(Connection connection, CandidateSql sql, String candidateId, Duration timeout)
			throws SQLException {
		try {
			update(connection, sql.remove(), timeout, candidateId);
		}
		catch (SQLException ex) {
			reportMissingTable(sql, ex);
			throw ex;
		}
	}

	/**
	 * Checks that the table exists with the expected columns.
	 * @throws IllegalStateException with the statement that creates it if it does not
	 */
	static void verify(Connection connection, CandidateSql sql) throws SQLException {
		try (Statement statement = connection.createStatement();
				ResultSet rows = statement.executeQuery(sql.verify())) {
			rows.next();
		}
		catch (SQLException ex) {
			reportMissingTable(sql, ex);
			throw ex;
		}
	}

	private static void read(ResultSet rows, Map<String, Integer> live, List<String> expired) throws SQLException {
		long removalDelay = REMOVAL_DELAY.toMillis();
		while (rows.next()) {
			String candidate = rows.getString(1);
			long left = rows.getLong(3);
			if (left > 0) {
				live.put(candidate, rows.getInt(2));
			}
			else if (left < -removalDelay && expired.size() < MAX_REMOVED_PER_CALL) {
				expired.add(candidate);
			}
		}
	}

	/**
	 * Deletes entries that ran out long ago, in a statement of their own: the answer is
	 * known already, and candidates that crash leave an entry each, so without this a
	 * table under candidates with new ids at every start would grow for ever.
	 */
	private static void removeExpired(Connection connection, CandidateSql sql, List<String> expired, long deadline) {
		Object[] parameters = new Object[expired.size() + 1];
		for (int i = 0; i < expired.size(); i++) {
			parameters[i] = expired.get(i);
		}
		parameters[expired.size()] = REMOVAL_DELAY.toMillis();
		try {
			update(connection, sql.removeExpired(expired.size()), remaining(connection, deadline), parameters);
		}
		catch (SQLException ex) {
			// Only housekeeping, which the next call tries again (another node may be
			// deleting the same entries): the entries written and read stand.
			logger.debug("Could not delete {} expired entries from table {}", expired.size(), sql.table(), ex);
		}
	}

	/**
	 * Throws an {@link IllegalStateException} with the statement that creates the table
	 * when a failure says that it or a column is missing, as the lease table's check
	 * does; returns otherwise.
	 */
	private static void reportMissingTable(CandidateSql sql, SQLException ex) {
		if (StoreTables.isMissingTableOrColumn(ex)) {
			throw new IllegalStateException("The leader election candidates table " + sql.table() + ", which "
					+ "balancing needs, is missing or lacks columns (" + ex.getMessage() + "); create it with:\n"
					+ sql.ddl() + ";", ex);
		}
	}

}
