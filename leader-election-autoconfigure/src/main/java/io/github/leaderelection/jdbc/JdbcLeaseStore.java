package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

import javax.sql.DataSource;

import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;

import org.jspecify.annotations.Nullable;

import static io.github.leaderelection.jdbc.SqlRunner.prepare;
import static io.github.leaderelection.jdbc.SqlRunner.transaction;
import static io.github.leaderelection.jdbc.SqlRunner.update;

/**
 * A lease store on one table of a MySQL, MariaDB, PostgreSQL or H2 database, whose clock judges
 * every lease.
 */
public class JdbcLeaseStore implements LeaseStore {

	private static final String DEFAULT_TABLE_NAME = "leader_election";

	private final SqlRunner runner;

	private final String tableName;

	private final Object sqlMonitor = new Object();

	private volatile @Nullable LeaseSql sql;

	public JdbcLeaseStore(DataSource dataSource) {
		this(dataSource, DEFAULT_TABLE_NAME);
	}

	/**
	 * Creates a store on the given table.
	 * @param tableName a plain or schema-qualified name of letters, digits and underscores
	 * @throws IllegalArgumentException if the name is not one
	 */
	public JdbcLeaseStore(DataSource dataSource, String tableName) {
		this.runner = new SqlRunner(Objects.requireNonNull(dataSource, "dataSource"));
		this.tableName = TableName.requireValid(tableName);
	}

	/** Returns the statement that creates this store's table, the same for every supported database. */
	public String ddl() {
		return LeaseSql.ddl(this.tableName);
	}

	/** Creates this store's table unless it exists. */
	public void createTableIfMissing() {
		try {
			this.runner.run(null, (connection) -> {
				sql(connection);
				try (Statement statement = connection.createStatement()) {
					return statement.execute(ddl());
				}
			});
		}
		catch (SQLException ex) {
			// Nodes starting together race on the catalog (PostgreSQL then reports a unique violation
			// to all but one): what counts is that the table is there now.
			try {
				verifyTable();
			}
			catch (RuntimeException stillMissing) {
				throw new LeaderElectionException("Could not create table " + this.tableName + ": " + ex.getMessage(),
						ex);
			}
		}
	}

	/**
	 * Checks that this store's table exists with the expected columns.
	 * @throws IllegalStateException with the statement to run if it does not, or if the database is
	 * not supported
	 */
	public void verifyTable() {
		try {
			this.runner.run(null, (connection) -> {
				try (Statement statement = connection.createStatement();
						ResultSet rows = statement.executeQuery(sql(connection).verify())) {
					return rows.next();
				}
			});
		}
		catch (SQLException ex) {
			// Class 42 is "syntax error or access rule violation": here, an unknown table or column.
			if (ex.getSQLState() != null && ex.getSQLState().startsWith("42")) {
				throw new IllegalStateException("The leader election table " + this.tableName + " is missing or lacks "
						+ "columns (" + ex.getMessage() + "); create it with:\n" + ddl() + ";", ex);
			}
			throw new LeaderElectionException("Could not verify table " + this.tableName + ": " + ex.getMessage(), ex);
		}
	}

	@Override
	public Optional<Lease> read(String group, Duration timeout) {
		return execute("read the lease of", group, timeout, (connection, sql) -> read(connection, sql, group, timeout));
	}

	@Override
	public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		long millis = leaseDuration.toMillis();
		return execute("acquire the lease of", group, timeout, (connection, sql) -> {
			Optional<Lease> taken = takeOver(connection, sql, group, candidateId, millis, timeout);
			if (taken.isPresent() || read(connection, sql, group, timeout).isPresent()) {
				return taken;
			}
			try {
				return transaction(connection, () -> {
					update(connection, sql.insert(), timeout, group, candidateId, 1L, millis);
					return read(connection, sql, group, timeout);
				});
			}
			catch (SQLException ex) {
				if (!isDuplicateKey(ex)) {
					throw ex;
				}
			}
			// Another candidate created the row first; a forced leader's row may name us.
			return takeOver(connection, sql, group, candidateId, millis, timeout);
		});
	}

	@Override
	public boolean renew(Lease lease, Duration leaseDuration, Duration timeout) {
		if (lease.holder() == null) {
			return false;
		}
		// Under "affected rows" semantics (useAffectedRows=true) a renewal to the very millisecond the
		// lease already ends counts 0: the engine then steps down early, never late.
		return execute("renew the lease of", lease.group(), timeout, (connection, sql) -> update(connection,
				sql.renew(), timeout, leaseDuration.toMillis(), lease.group(), lease.holder(), lease.term()) > 0);
	}

	@Override
	public void release(Lease lease, Duration timeout) {
		if (lease.holder() == null) {
			return;
		}
		execute("release the lease of", lease.group(), timeout,
				(connection, sql) -> update(connection, sql.release(), timeout, lease.group(), lease.holder(),
						lease.term()));
	}

	@Override
	public void forceLeader(String group, String candidateId, Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		execute("force a leader for", group, timeout, (connection, sql) -> {
			if (update(connection, sql.force(), timeout, candidateId, group, candidateId) > 0) {
				return null;
			}
			try {
				// Term 0 with a lease already over: the named candidate takes term 1 at once.
				update(connection, sql.insert(), timeout, group, candidateId, 0L, 0L);
			}
			catch (SQLException ex) {
				// The row appeared meanwhile, or exists and already names the candidate.
				if (!isDuplicateKey(ex)) {
					throw ex;
				}
				update(connection, sql.force(), timeout, candidateId, group, candidateId);
			}
			return null;
		});
	}

	@Override
	public void clear(String group, Duration timeout) {
		execute("clear the holder of", group, timeout,
				(connection, sql) -> update(connection, sql.clear(), timeout, group));
	}

	@Override
	public String backend() {
		return "jdbc";
	}

	/**
	 * Takes the existing row in one transaction and reads it back under the row lock, so that the
	 * lease returned is exactly the one written. The count is reliable under both "found rows" and
	 * "affected rows" semantics because the term always changes.
	 */
	private Optional<Lease> takeOver(Connection connection, LeaseSql sql, String group, String candidateId, long millis,
			Duration timeout) throws SQLException {
		return transaction(connection,
				() -> (update(connection, sql.acquire(), timeout, candidateId, millis, group, candidateId) > 0)
						? read(connection, sql, group, timeout) : Optional.empty());
	}

	private Optional<Lease> read(Connection connection, LeaseSql sql, String group, Duration timeout)
			throws SQLException {
		try (PreparedStatement statement = prepare(connection, sql.read(), timeout, group);
				ResultSet rows = statement.executeQuery()) {
			if (!rows.next()) {
				return Optional.empty();
			}
			return Optional.of(new Lease(group, rows.getString(1), rows.getLong(2), Duration.ofMillis(rows.getLong(3)),
					Duration.ofMillis(Math.max(0, rows.getLong(4)))));
		}
	}

	private static boolean isDuplicateKey(SQLException ex) {
		return ex.getSQLState() != null && ex.getSQLState().startsWith("23");
	}

	private <T> T execute(String operation, String group, Duration timeout, SqlWork<T> work) {
		Objects.requireNonNull(group, "group");
		try {
			return this.runner.run(timeout, (connection) -> work.run(connection, sql(connection)));
		}
		catch (SQLException ex) {
			throw new LeaderElectionException("Could not " + operation + " group '" + group + "' in table "
					+ this.tableName + ": " + ex.getMessage(), ex);
		}
	}

	private LeaseSql sql(Connection connection) throws SQLException {
		LeaseSql sql = this.sql;
		if (sql == null) {
			synchronized (this.sqlMonitor) {
				sql = this.sql;
				if (sql == null) {
					SqlDialect dialect = SqlDialect.forProductName(connection.getMetaData().getDatabaseProductName());
					sql = LeaseSql.of(dialect, this.tableName);
					this.sql = sql;
				}
			}
		}
		return sql;
	}

	@FunctionalInterface
	private interface SqlWork<T> {

		T run(Connection connection, LeaseSql sql) throws SQLException;

	}

}
