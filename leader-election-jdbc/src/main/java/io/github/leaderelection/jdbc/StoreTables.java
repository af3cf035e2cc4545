package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The tables of a {@link JdbcLeaseStore}: the lease table under the configured name, and,
 * named after it, the table of live candidates that balancing reads
 * ({@link TableName#candidates}) and the table of run records ({@link TableName#runs});
 * the statements that create them, and the checks that they exist.
 */
final class StoreTables {

	private final String leases;

	private final String candidates;

	private final String runs;

	/**
	 * @param leases the lease table's name
	 * @throws IllegalArgumentException if it is not a valid table name
	 */
	StoreTables(String leases) {
		this.leases = TableName.requireValid(leases);
		this.candidates = TableName.candidates(this.leases);
		this.runs = TableName.runs(this.leases);
	}

	String leases() {
		return this.leases;
	}

	String candidates() {
		return this.candidates;
	}

	String runs() {
		return this.runs;
	}

	/**
	 * Returns the statements that create the tables, separated by a semicolon and a line
	 * break, without a final semicolon.
	 */
	String ddl() {
		return LeaseSql.ddl(this.leases) + ";\n" + RunRecordSql.ddl(this.runs) + ";\n"
				+ LeaseSql.candidatesDdl(this.candidates);
	}

	/**
	 * Creates the tables unless they exist.
	 * @throws IllegalArgumentException if the database refuses the table name
	 */
	void createIfMissing(Connection connection, LeaseSql sql) throws SQLException {
		createIfMissing(connection, LeaseSql.ddl(this.leases), () -> {
			verify(connection, sql);
			return null;
		});
		createIfMissing(connection, sql.candidates().ddl(), () -> {
			LiveCandidates.verify(connection, sql.candidates());
			return null;
		});
		RunRecordSql runSql = RunRecordSql.of(sql.dialect(), this.leases);
		createIfMissing(connection, runSql.ddl(), () -> {
			verifyRuns(connection, runSql);
			return null;
		});
	}

	/**
	 * Checks that the table of run records exists with the expected columns.
	 * @throws IllegalStateException with the statement that creates it if it does not
	 */
	void verifyRuns(Connection connection, RunRecordSql sql) throws SQLException {
		try (Statement statement = connection.createStatement();
				ResultSet rows = statement.executeQuery(sql.verify())) {
			rows.next();
		}
		catch (SQLException ex) {
			if (isMissingTableOrColumn(ex)) {
				throw new IllegalStateException("The table of run records " + this.runs + " is missing or lacks "
						+ "columns (" + ex.getMessage() + "); create it with:\n" + sql.ddl() + ";", ex);
			}
			throw ex;
		}
	}

	/**
	 * Checks that the lease table exists with the expected columns.
	 * @throws IllegalStateException with the statements that create the tables if it does
	 * not
	 * @throws IllegalArgumentException if the database refuses the table name
	 */
	void verify(Connection connection, LeaseSql sql) throws SQLException {
		try (Statement statement = connection.createStatement();
				ResultSet rows = statement.executeQuery(sql.verify())) {
			rows.next();
		}
		catch (SQLException ex) {
			if (isSyntaxError(ex)) {
				throw refusedName(ex);
			}
			if (isMissingTableOrColumn(ex)) {
				throw new IllegalStateException("The leader election table " + this.leases + " is missing or lacks "
						+ "columns (" + ex.getMessage() + "); create it, and the tables of run records and of "
						+ "candidates (for balancing), with:\n" + ddl() + ";", ex);
			}
			throw ex;
		}
	}

	/**
	 * Whether a failed statement on one of the tables says that the table or a column is
	 * missing: class 42 is "syntax error or access rule violation", and the statements
	 * are known to be valid, except for the name ({@link #isSyntaxError}).
	 */
	static boolean isMissingTableOrColumn(SQLException ex) {
		return ex.getSQLState() != null && ex.getSQLState().startsWith("42");
	}

	/**
	 * Whether a statement failed as a syntax error: PostgreSQL's syntax_error, MySQL's
	 * and MariaDB's ER_PARSE_ERROR, H2's two syntax errors. The statements are valid with
	 * any valid name, so the name is one that the database reserves, such as 'user' on
	 * PostgreSQL or 'key' on MySQL.
	 */
	static boolean isSyntaxError(SQLException ex) {
		String state = ex.getSQLState();
		if (state == null) {
			return false;
		}
		return state.equals("42601") || (state.equals("42000") && ex.getErrorCode() == 1064)
				|| ((state.equals("42000") || state.equals("42001"))
						&& (ex.getErrorCode() == 42000 || ex.getErrorCode() == 42001));
	}

	private IllegalArgumentException refusedName(SQLException ex) {
		return new IllegalArgumentException("The database refuses the table name '" + this.leases + "' as a syntax "
				+ "error (" + ex.getMessage() + "): it is likely a word that this database reserves", ex);
	}

	private void createIfMissing(Connection connection, String ddl, SqlRunner.Call<?> verify) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			statement.execute(ddl);
		}
		catch (SQLException ex) {
			if (isSyntaxError(ex)) {
				throw refusedName(ex);
			}
			// Nodes starting together race on the catalog (PostgreSQL then reports a
			// unique violation to all but one): what counts is that the table is there
			// now.
			try {
				verify.call();
			}
			catch (SQLException | RuntimeException stillMissing) {
				ex.addSuppressed(stillMissing);
				throw ex;
			}
		}
	}

}
