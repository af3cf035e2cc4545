package io.github.leaderelection.jdbc;

import java.util.Collections;
import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

/**
 * The statements of a {@link JdbcLeaseStore} on one group, rendered once for its dialect
 * and table from templates that differ between databases only in the clock expression,
 * and the dialect's {@linkplain SqlDialect#announce() announcing query}, {@code null}
 * where the database cannot push. The statements on many groups at once are in
 * {@link BatchSql}; those on the table of live candidates that balancing reads are in
 * {@link #candidates()}.
 */
record LeaseSql(SqlDialect dialect, String read, String acquire, String insert, String renew, String release,
		String force, String clear, String recover, String verify, @Nullable String announce, CandidateSql candidates) {

	/**
	 * The term of a grant on an existing row: above the row's and at least the database
	 * clock in microseconds, so that a term is never handed out twice, not even when the
	 * row went back to an older term (a restore, a hand edit) before a candidate that had
	 * not seen the later one took it.
	 */
	static final String NEXT_TERM = "GREATEST(term + 1, {nowMicros})";

	/** The term of a group's first grant: the database clock in microseconds. */
	static final String FIRST_TERM = "{nowMicros}";

	private static final String DDL = """
			CREATE TABLE IF NOT EXISTS {table} (
			  group_name     VARCHAR(255) NOT NULL PRIMARY KEY,
			  holder_id      VARCHAR(255),
			  term           BIGINT NOT NULL,
			  active_from_ms BIGINT NOT NULL,
			  lease_until_ms BIGINT NOT NULL
			)""";

	private static final String READ = "SELECT holder_id, term, lease_until_ms - {now}, active_from_ms - {now} "
			+ "FROM {table} WHERE group_name = ?";

	// active_from_ms is assigned first and no assignment reads a column assigned before
	// it: MySQL and MariaDB assign left to right with the new values, PostgreSQL and H2
	// from the old row.
	private static final String ACQUIRE = "UPDATE {table} SET active_from_ms = GREATEST(lease_until_ms, {now}), "
			+ "holder_id = ?, term = " + NEXT_TERM + ", lease_until_ms = {now} + ? "
			+ "WHERE group_name = ? AND (holder_id IS NULL OR holder_id = ? OR lease_until_ms <= {now})";

	private static final String INSERT = "INSERT INTO {table} (group_name, holder_id, term, active_from_ms, "
			+ "lease_until_ms) VALUES (?, ?, " + FIRST_TERM + ", {now}, {now} + ?)";

	private static final String RENEW = "UPDATE {table} SET lease_until_ms = {now} + ? "
			+ "WHERE group_name = ? AND holder_id = ? AND term = ?";

	// Never before active_from_ms: a holder that releases while still waiting out an
	// earlier holder must pass that wait on to the next one.
	private static final String RELEASE = "UPDATE {table} SET holder_id = NULL, "
			+ "lease_until_ms = GREATEST(LEAST(lease_until_ms, {now}), active_from_ms) "
			+ "WHERE group_name = ? AND holder_id = ? AND term = ?";

	// A new term, so that every term names one holder; the current holder itself is left
	// alone.
	private static final String FORCE = "UPDATE {table} SET holder_id = ?, term = " + NEXT_TERM + ", "
			+ "lease_until_ms = GREATEST(lease_until_ms, {now}) "
			+ "WHERE group_name = ? AND (holder_id IS NULL OR holder_id <> ?)";

	private static final String CLEAR = "UPDATE {table} SET holder_id = NULL WHERE group_name = ?";

	// A grant just made on a lost record, or on a lease that ended earlier than seen
	// (SeenTerms), in the transaction that made it: a term at least the one given, and a
	// wait of the milliseconds given. No assignment reads a column assigned before it.
	private static final String RECOVER = "UPDATE {table} SET term = GREATEST(term, ?), "
			+ "active_from_ms = GREATEST(active_from_ms, {now} + ?) WHERE group_name = ? AND holder_id = ? AND term = ?";

	private static final String VERIFY = "SELECT group_name, holder_id, term, active_from_ms, lease_until_ms "
			+ "FROM {table} WHERE 1 = 0";

	private static final String CANDIDATES_DDL = """
			CREATE TABLE IF NOT EXISTS {table} (
			  candidate_id   VARCHAR(255) NOT NULL PRIMARY KEY,
			  weight         INT NOT NULL,
			  alive_until_ms BIGINT NOT NULL
			)""";

	// Every entry with the time it has left by the database clock, run out or not: the
	// caller keeps those with time left (expired at alive_until_ms <= {now}, as a lease
	// is), and finds the long-expired ones to delete without a statement of its own.
	private static final String CANDIDATE_COLUMNS = "candidate_id, weight, alive_until_ms - {now}";

	// One statement. The SELECT reads the table as it was before the statement, without
	// the CTE's write: the entry written comes from RETURNING, and its old version is
	// left out.
	private static final String KEEP_CANDIDATE_ALIVE_POSTGRESQL = "WITH up AS (INSERT INTO {table} (candidate_id, "
			+ "weight, alive_until_ms) VALUES (?, ?, {now} + ?) ON CONFLICT (candidate_id) DO UPDATE SET "
			+ "weight = EXCLUDED.weight, alive_until_ms = EXCLUDED.alive_until_ms "
			+ "RETURNING candidate_id, weight, alive_until_ms) SELECT " + CANDIDATE_COLUMNS + " FROM up UNION ALL "
			+ "SELECT " + CANDIDATE_COLUMNS + " FROM {table} WHERE candidate_id <> ?";

	// One statement, as on PostgreSQL: a data change delta table is how a query runs the
	// MERGE and yields the entry written; the other entries leave it out, so they do not
	// depend on whether their SELECT sees the write.
	private static final String KEEP_CANDIDATE_ALIVE_H2 = "SELECT " + CANDIDATE_COLUMNS + " FROM FINAL TABLE ("
			+ "MERGE INTO {table} (candidate_id, weight, alive_until_ms) KEY (candidate_id) VALUES (?, ?, {now} + ?)) "
			+ "UNION ALL SELECT " + CANDIDATE_COLUMNS + " FROM {table} WHERE candidate_id <> ?";

	// Two statements, this and LIST_CANDIDATES: MySQL has no RETURNING, MariaDB's returns
	// only the rows written, and the drivers send one statement per call unless the
	// connection allows multiple queries. VALUES() is deprecated since MySQL 8.0.20 and
	// MariaDB lacks the row alias that replaces it, so the new values are bound twice.
	private static final String KEEP_CANDIDATE_ALIVE_MYSQL = "INSERT INTO {table} (candidate_id, weight, "
			+ "alive_until_ms) VALUES (?, ?, {now} + ?) ON DUPLICATE KEY UPDATE weight = ?, alive_until_ms = {now} + ?";

	private static final String LIST_CANDIDATES = "SELECT " + CANDIDATE_COLUMNS + " FROM {table}";

	private static final String REMOVE_CANDIDATE = "DELETE FROM {table} WHERE candidate_id = ?";

	// By primary key, so that only these rows are locked, and judged again: an entry
	// kept alive since it was read stays.
	private static final String REMOVE_EXPIRED_CANDIDATES = "DELETE FROM {table} WHERE candidate_id IN ({ids}) "
			+ "AND alive_until_ms < {now} - ?";

	private static final String VERIFY_CANDIDATES = "SELECT candidate_id, weight, alive_until_ms FROM {table} "
			+ "WHERE 1 = 0";

	/** Returns the statement that creates the lease table, the same for every dialect. */
	static String ddl(String table) {
		return DDL.replace("{table}", table);
	}

	/**
	 * Returns the statement that creates the table of live candidates, the same for every
	 * dialect.
	 * @param table the name of the candidates table ({@link TableName#candidates})
	 */
	static String candidatesDdl(String table) {
		return CANDIDATES_DDL.replace("{table}", table);
	}

	/**
	 * The write as one query that also announces it (see {@link SqlDialect#announce()}),
	 * or {@code null} where the database cannot push.
	 */
	@Nullable String announcing(String write) {
		return (this.announce != null) ? this.announce.replace("{write}", write) : null;
	}

	static LeaseSql of(SqlDialect dialect, String table) {
		UnaryOperator<String> render = (template) -> template.replace("{table}", table)
			.replace("{nowMicros}", dialect.nowMicros())
			.replace("{now}", dialect.nowMillis());
		return new LeaseSql(dialect, render.apply(READ), render.apply(ACQUIRE), render.apply(INSERT),
				render.apply(RENEW), render.apply(RELEASE), render.apply(FORCE), render.apply(CLEAR),
				render.apply(RECOVER), render.apply(VERIFY), dialect.announce(),
				CandidateSql.of(dialect, TableName.candidates(table)));
	}

	private static String placeholders(String one, int count) {
		return String.join(", ", Collections.nCopies(count, one));
	}

	/**
	 * The statements on the table of live candidates, rendered for a dialect.
	 *
	 * @param table the name of the table
	 * @param ddl the statement that creates it
	 * @param keepAlive where {@code list} is {@code null}, a query that writes the entry
	 * (candidate, weight, time to live in milliseconds, then the candidate again) and
	 * yields it and every other entry as {@link #list} does; elsewhere an update that
	 * only writes it (candidate, weight, time to live, weight, time to live)
	 * @param list the query that yields every entry: candidate, weight, and milliseconds
	 * left by the database clock (not positive once it ran out), or {@code null} where
	 * {@code keepAlive} does that itself
	 * @param remove deletes a candidate's entry
	 * @param removeExpiredTemplate deletes entries that ran out long ago, with a
	 * placeholder for their list ({@link #removeExpired(int)})
	 * @param verify a query that fails unless the table has the expected columns
	 */
	record CandidateSql(String table, String ddl, String keepAlive, @Nullable String list, String remove,
			String removeExpiredTemplate, String verify) {

		static CandidateSql of(SqlDialect dialect, String table) {
			UnaryOperator<String> render = (template) -> template.replace("{table}", table)
				.replace("{nowMicros}", dialect.nowMicros())
				.replace("{now}", dialect.nowMillis());
			String keepAlive = switch (dialect) {
				case POSTGRESQL -> KEEP_CANDIDATE_ALIVE_POSTGRESQL;
				case H2 -> KEEP_CANDIDATE_ALIVE_H2;
				case MYSQL -> KEEP_CANDIDATE_ALIVE_MYSQL;
			};
			return new CandidateSql(table, candidatesDdl(table), render.apply(keepAlive),
					(dialect == SqlDialect.MYSQL) ? render.apply(LIST_CANDIDATES) : null,
					render.apply(REMOVE_CANDIDATE), render.apply(REMOVE_EXPIRED_CANDIDATES),
					render.apply(VERIFY_CANDIDATES));
		}

		/** Returns the parameters of {@link #keepAlive()}. */
		Object[] keepAliveParameters(String candidateId, int weight, long ttlMillis) {
			return (this.list != null) ? new Object[] { candidateId, weight, ttlMillis, weight, ttlMillis }
					: new Object[] { candidateId, weight, ttlMillis, candidateId };
		}

		/**
		 * Returns the statement that deletes the given number of entries, bound in order,
		 * then a number of milliseconds: each only if it ran out longer ago than that.
		 */
		String removeExpired(int candidates) {
			return this.removeExpiredTemplate.replace("{ids}", placeholders("?", candidates));
		}

	}

}
