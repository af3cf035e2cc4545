package io.github.leaderelection.jdbc;

import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

/**
 * The statements of a {@link JdbcLeaseStore}, rendered once for its dialect and table
 * from templates that differ between databases only in the clock expression, and the
 * dialect's {@linkplain SqlDialect#announce() notify query}, {@code null} where the
 * database cannot push.
 */
record LeaseSql(String read, String acquire, String insert, String renew, String release, String force, String clear,
		String verify, @Nullable String announce) {

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
		return new LeaseSql(render.apply(READ), render.apply(ACQUIRE), render.apply(INSERT), render.apply(RENEW),
				render.apply(RELEASE), render.apply(FORCE), render.apply(CLEAR), render.apply(VERIFY),
				dialect.announce());
	}

}
