package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.RunRecordStore;

import static io.github.leaderelection.jdbc.SqlRunner.prepare;
import static io.github.leaderelection.jdbc.SqlRunner.update;

/**
 * The run records of a {@link JdbcLeaseStore}, one row per group and job in the table
 * next to the lease table: the statements of each call, on a connection the store
 * borrowed.
 */
final class JdbcRunRecords {

	private JdbcRunRecords() {
	}

	static Optional<RunRecord> lastRun(Connection connection, RunRecordSql sql, String group, String job,
			Duration timeout) throws SQLException {
		return readRun(connection, sql.read(), group, job, timeout);
	}

	static List<RunRecord> runs(Connection connection, RunRecordSql sql, String group, Duration timeout)
			throws SQLException {
		List<RunRecord> runs = new ArrayList<>();
		try (PreparedStatement statement = prepare(connection, sql.readGroup(), timeout, group);
				ResultSet rows = statement.executeQuery()) {
			while (rows.next()) {
				runs.add(run(group, rows.getString(1), rows, 1));
			}
		}
		// The database orders by its collation (MariaDB's default ignores case), the
		// contract by String.compareTo; the rows come nearly sorted already.
		runs.sort(Comparator.comparing(RunRecord::job));
		return runs;
	}

	/**
	 * Claims the run in single statements on a connection in auto-commit mode (see
	 * {@link RunRecordSql}): over the job's row when it has one the run may follow, else
	 * as its first row; when another claim wrote the first row meanwhile, over that row.
	 */
	static boolean claimRun(Connection connection, RunRecordSql sql, Lease lease, RunRecord run, Duration minInterval,
			Duration timeout) throws SQLException {
		if (!RunRecordStore.isClaimedUnder(lease, run)) {
			return false;
		}
		if (claimOver(connection, sql, run, minInterval, timeout)) {
			return true;
		}
		try {
			return update(connection, sql.claimFirst(), timeout, run.group(), run.job(), run.tick(), run.holder(),
					run.term(), run.started().toEpochMilli(), run.outcome().name(), run.group(), run.holder(),
					run.term()) > 0;
		}
		catch (SQLException ex) {
			if (!JdbcLeaseStore.isDuplicateKey(ex)) {
				throw ex;
			}
			return claimOver(connection, sql, run, minInterval, timeout);
		}
	}

	private static boolean claimOver(Connection connection, RunRecordSql sql, RunRecord run, Duration minInterval,
			Duration timeout) throws SQLException {
		long latestTick = latestTickToFollow(run.tick(), minInterval);
		return update(connection, sql.claimOver(), timeout, run.tick(), run.holder(), run.term(),
				run.started().toEpochMilli(), run.outcome().name(), run.group(), run.job(), run.tick(), latestTick,
				run.term(), run.group(), run.holder(), run.term()) > 0;
	}

	/**
	 * The latest tick of a last run that a run at the given tick may follow, as
	 * {@link RunRecord#mayFollow} has it: the tick minus the minimum interval.
	 */
	private static long latestTickToFollow(long tick, Duration minInterval) {
		long interval = minInterval.toMillis();
		long latest = tick - interval;
		// Overflow only on ticks far before the epoch: then no tick is early enough.
		return (interval > 0 && latest > tick) ? Long.MIN_VALUE : latest;
	}

	static boolean finishRun(Connection connection, RunRecordSql sql, RunRecord ended, Duration timeout)
			throws SQLException {
		Instant at = Objects.requireNonNull(ended.ended(), "ended");
		return update(connection, sql.finish(), timeout, at.toEpochMilli(), ended.outcome().name(), ended.group(),
				ended.job(), ended.tick(), ended.holder(), ended.term()) > 0;
	}

	/** Reads the job's row with the query given, which selects the run's columns. */
	private static Optional<RunRecord> readRun(Connection connection, String query, String group, String job,
			Duration timeout) throws SQLException {
		try (PreparedStatement statement = prepare(connection, query, timeout, group, job);
				ResultSet row = statement.executeQuery()) {
			return row.next() ? Optional.of(run(group, job, row, 0)) : Optional.empty();
		}
	}

	/** The run in the row's columns of a run, from the one after {@code skipped}. */
	private static RunRecord run(String group, String job, ResultSet row, int skipped) throws SQLException {
		long ended = row.getLong(skipped + 5);
		Instant endedAt = row.wasNull() ? null : Instant.ofEpochMilli(ended);
		return new RunRecord(group, job, row.getLong(skipped + 1), row.getString(skipped + 2), row.getLong(skipped + 3),
				Instant.ofEpochMilli(row.getLong(skipped + 4)), endedAt,
				RunOutcome.valueOf(row.getString(skipped + 6)));
	}

}
