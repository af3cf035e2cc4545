package io.github.leaderelection.jdbc;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

/**
 * The statements of a {@link JdbcLeaseStore}, rendered once for its dialect and table
 * from templates that differ between databases only in the clock expression and in how an
 * UPDATE reports its rows, and the dialect's {@linkplain SqlDialect#announce() notify
 * query}, {@code null} where the database cannot push. The statements on many groups get
 * their list of placeholders per call ({@link #readAll(int)}, {@link #renewAll(int)}).
 */
record LeaseSql(String read, String acquire, String insert, String renew, String release, String force, String clear,
		String verify, @Nullable String announce, String readAllTemplate, String renewAllTemplate,
		boolean renewAllReturnsGroups) {

	/**
	 * The most groups one statement names. MariaDB turns an IN list of 1000 values or
	 * more ({@code in_predicate_conversion_threshold}) into a subquery over a scan of the
	 * whole table, and an UPDATE locks every row it scans (InnoDB); 500 keeps both
	 * statements on the primary key, and far below every driver's limit of bind
	 * parameters (a renewal binds 3 per group, and 1 more).
	 */
	static final int MAX_GROUPS_PER_STATEMENT = 500;

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
	// it: MySQL and
	// MariaDB assign left to right with the new values, PostgreSQL and H2 from the old
	// row.
	private static final String ACQUIRE = "UPDATE {table} SET active_from_ms = GREATEST(lease_until_ms, {now}), "
			+ "holder_id = ?, term = term + 1, lease_until_ms = {now} + ? "
			+ "WHERE group_name = ? AND (holder_id IS NULL OR holder_id = ? OR lease_until_ms <= {now})";

	private static final String INSERT = "INSERT INTO {table} (group_name, holder_id, term, active_from_ms, "
			+ "lease_until_ms) VALUES (?, ?, ?, {now}, {now} + ?)";

	private static final String RENEW = "UPDATE {table} SET lease_until_ms = {now} + ? "
			+ "WHERE group_name = ? AND holder_id = ? AND term = ?";

	// Never before active_from_ms: a holder that releases while still waiting out an
	// earlier
	// holder must pass that wait on to the next one.
	private static final String RELEASE = "UPDATE {table} SET holder_id = NULL, "
			+ "lease_until_ms = GREATEST(LEAST(lease_until_ms, {now}), active_from_ms) "
			+ "WHERE group_name = ? AND holder_id = ? AND term = ?";

	// A new term, so that every term names one holder; the current holder itself is left
	// alone.
	private static final String FORCE = "UPDATE {table} SET holder_id = ?, term = term + 1, "
			+ "lease_until_ms = GREATEST(lease_until_ms, {now}) "
			+ "WHERE group_name = ? AND (holder_id IS NULL OR holder_id <> ?)";

	// The group name comes last so that the first four columns are read as READ's are.
	private static final String READ_ALL = "SELECT holder_id, term, lease_until_ms - {now}, active_from_ms - {now}, "
			+ "group_name FROM {table} WHERE group_name IN ({groups})";

	// RENEW for many leases: each row is matched on its own group, holder and term.
	private static final String RENEW_ALL = "UPDATE {table} SET lease_until_ms = {now} + ? "
			+ "WHERE (group_name, holder_id, term) IN ({leases})";

	private static final String CLEAR = "UPDATE {table} SET holder_id = NULL WHERE group_name = ?";

	private static final String VERIFY = "SELECT group_name, holder_id, term, active_from_ms, lease_until_ms "
			+ "FROM {table} WHERE 1 = 0";

	/** Returns the statement that creates the table, the same for every dialect. */
	static String ddl(String table) {
		return DDL.replace("{table}", table);
	}

	static LeaseSql of(SqlDialect dialect, String table) {
		UnaryOperator<String> render = (template) -> template.replace("{table}", table)
			.replace("{now}", dialect.nowMillis());
		String returning = dialect.returning(render.apply(RENEW_ALL), "group_name");
		return new LeaseSql(render.apply(READ), render.apply(ACQUIRE), render.apply(INSERT), render.apply(RENEW),
				render.apply(RELEASE), render.apply(FORCE), render.apply(CLEAR), render.apply(VERIFY),
				dialect.announce(), render.apply(READ_ALL), (returning != null) ? returning : render.apply(RENEW_ALL),
				returning != null);
	}

	/**
	 * Returns the query that reads the given number of groups, bound in order, with the
	 * columns of {@link #read()} followed by the group name as the table has it.
	 */
	String readAll(int groups) {
		return this.readAllTemplate.replace("{groups}", placeholders("?", groups));
	}

	/**
	 * Returns the statement that renews the given number of leases: the lease duration in
	 * milliseconds, then group, holder and term of each lease. Where
	 * {@link #renewAllReturnsGroups()}, it is a query that yields the name of each group
	 * it renewed; elsewhere an update that counts them.
	 */
	String renewAll(int leases) {
		return this.renewAllTemplate.replace("{leases}", placeholders("(?, ?, ?)", leases));
	}

	/**
	 * Splits items into lists of at most {@link #MAX_GROUPS_PER_STATEMENT}, one per
	 * statement.
	 */
	static <T> List<List<T>> perStatement(List<T> items) {
		List<List<T>> chunks = new ArrayList<>();
		for (int from = 0; from < items.size(); from += MAX_GROUPS_PER_STATEMENT) {
			chunks.add(items.subList(from, Math.min(items.size(), from + MAX_GROUPS_PER_STATEMENT)));
		}
		return chunks;
	}

	private static String placeholders(String one, int count) {
		return String.join(", ", Collections.nCopies(count, one));
	}

}
