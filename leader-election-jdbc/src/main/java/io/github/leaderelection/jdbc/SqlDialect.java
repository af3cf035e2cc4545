package io.github.leaderelection.jdbc;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * The databases the JDBC lease store supports, each with its expression for the database
 * clock, where the database can push, its query that notifies listeners, and where an
 * UPDATE can report the rows it updated, the way to ask for them.
 */
enum SqlDialect {

	/**
	 * MySQL and MariaDB. {@code UTC_TIMESTAMP} is fixed at statement start and does not
	 * depend on the session time zone, unlike {@code UNIX_TIMESTAMP(NOW())}, which
	 * converts through it and is ambiguous in the hour a daylight saving time ends.
	 */
	MYSQL("(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)",
			"TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))", null, null, "MySQL", "MariaDB"),

	/**
	 * PostgreSQL. {@code statement_timestamp()} rather than {@code now()}, which stays at
	 * the start of the transaction. A write is announced by the statement that makes it
	 * (a data-modifying {@code WITH}), once for each row it changed; the notification is
	 * delivered when the statement commits, and only then.
	 */
	POSTGRESQL("CAST(FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000) AS BIGINT)",
			"CAST(FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000000) AS BIGINT)",
			"WITH changed AS ({write} RETURNING 1) SELECT pg_notify(?, ?) FROM changed", "{update} RETURNING {column}",
			"PostgreSQL"),

	/**
	 * H2 in any compatibility mode. {@code EXTRACT(EPOCH ...)} honours the offset of
	 * {@code CURRENT_TIMESTAMP}; {@code DATEDIFF} from an epoch literal does not outside
	 * UTC. Some modes fix {@code CURRENT_TIMESTAMP} for a whole transaction, which only
	 * makes a take-over and its read-back agree.
	 */
	H2("CAST(FLOOR(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000) AS BIGINT)",
			"CAST(FLOOR(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000) AS BIGINT)", null,
			"SELECT {column} FROM FINAL TABLE ({update})", "H2");

	private final String nowMillis;

	private final String nowMicros;

	private final @Nullable String announce;

	private final @Nullable String returning;

	private final List<String> productNames;

	SqlDialect(String nowMillis, String nowMicros, @Nullable String announce, @Nullable String returning,
			String... productNames) {
		this.nowMillis = nowMillis;
		this.nowMicros = nowMicros;
		this.announce = announce;
		this.returning = returning;
		this.productNames = List.of(productNames);
	}

	/**
	 * Returns an expression for the database clock in epoch milliseconds, constant within
	 * one statement and independent of the session time zone.
	 */
	String nowMillis() {
		return this.nowMillis;
	}

	/**
	 * Returns an expression for the database clock in epoch microseconds, constant within
	 * one statement: the floor of terms, at the clock's own resolution, so that two
	 * grants a millisecond apart never share a term.
	 */
	String nowMicros() {
		return this.nowMicros;
	}

	/**
	 * Returns the template of a query that runs a write ({@code {write}}, an
	 * {@code UPDATE} or {@code INSERT}) and notifies the listeners of a channel (the
	 * parameter after the write's) of a change to a group (the last parameter), once for
	 * each row written; or {@code null} for a database that cannot push.
	 */
	@Nullable String announce() {
		return this.announce;
	}

	/**
	 * Returns a query that runs an UPDATE and yields a column of each row it updated
	 * (matched), or {@code null} for a database that can only count them (MySQL and
	 * MariaDB 10 have no {@code UPDATE ... RETURNING}).
	 */
	@Nullable String returning(String update, String column) {
		return (this.returning != null) ? this.returning.replace("{update}", update).replace("{column}", column) : null;
	}

	/**
	 * Returns the dialect of a database, given the name that
	 * {@link java.sql.DatabaseMetaData#getDatabaseProductName()} reports.
	 * @throws IllegalStateException for a database that is not supported
	 */
	static SqlDialect forProductName(String productName) {
		for (SqlDialect dialect : values()) {
			for (String supported : dialect.productNames) {
				if (supported.equalsIgnoreCase(productName.trim())) {
					return dialect;
				}
			}
		}
		throw new IllegalStateException("The JDBC lease store does not support the database '" + productName
				+ "'; it supports " + supportedProductNames());
	}

	private static String supportedProductNames() {
		return Arrays.stream(values())
			.flatMap((dialect) -> dialect.productNames.stream())
			.collect(Collectors.joining(", "));
	}

}
