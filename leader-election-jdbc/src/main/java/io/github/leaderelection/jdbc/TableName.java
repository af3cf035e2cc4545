package io.github.leaderelection.jdbc;

import java.util.HexFormat;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

import io.github.leaderelection.spi.StoreNames;

/**
 * The check that makes a configured table name safe to put into SQL text, and the names
 * derived from a checked one.
 */
final class TableName {

	/** The rule for a table name and for each part of a schema-qualified one. */
	static final String PATTERN = "^[A-Za-z_][A-Za-z0-9_]{0,62}$";

	private static final Pattern PART = Pattern.compile(PATTERN);

	/**
	 * PostgreSQL truncates identifiers to 63 bytes, and pg_notify refuses longer channel
	 * names.
	 */
	private static final int MAX_CHANNEL_LENGTH = 63;

	/**
	 * The longest table name in every supported database: PostgreSQL truncates longer
	 * ones to 63 bytes, and MySQL refuses names longer than 64 characters.
	 */
	private static final int MAX_TABLE_LENGTH = 63;

	private static final String CANDIDATES_SUFFIX = "_candidates";

	private static final String RUNS_SUFFIX = "_runs";

	/**
	 * Words that every supported database (MySQL, MariaDB, PostgreSQL, H2) reserves, so
	 * that a table or schema of that name fails in each of them with a syntax error, and
	 * the SQL standard's value functions ({@code user}, {@code current_schema}...), which
	 * PostgreSQL reads in a FROM clause as a function rather than a table, so that a
	 * check of the table would blame missing columns instead. A word that only some
	 * databases reserve is refused by them when the table is created or checked
	 * ({@link StoreTables#isSyntaxError}).
	 */
	private static final Set<String> RESERVED_EVERYWHERE = Set.of("all", "and", "as", "both", "case", "check",
			"constraint", "cross", "current_date", "current_time", "current_timestamp", "current_user", "default",
			"distinct", "else", "false", "fetch", "for", "foreign", "from", "group", "having", "in", "inner", "is",
			"join", "leading", "left", "like", "limit", "localtime", "localtimestamp", "natural", "not", "null", "on",
			"or", "order", "primary", "right", "select", "table", "to", "trailing", "true", "union", "unique", "using",
			"when", "where", "with", "user", "session_user", "system_user", "current_role", "current_catalog",
			"current_schema");

	private TableName() {
	}

	/**
	 * Returns the name if it is a plain identifier or {@code schema.table} made of two,
	 * none of them a word that every supported database reserves.
	 * @throws IllegalArgumentException naming the value and the rule otherwise
	 */
	static String requireValid(String name) {
		Objects.requireNonNull(name, "tableName");
		String[] parts = name.split("\\.", -1);
		if (parts.length > 2 || !PART.matcher(parts[0]).matches()
				|| (parts.length == 2 && !PART.matcher(parts[1]).matches())) {
			throw StoreNames.invalid("table name", name,
					"it must match " + PATTERN + ", or be schema.table with each part matching it");
		}
		for (String part : parts) {
			if (RESERVED_EVERYWHERE.contains(part.toLowerCase(Locale.ROOT))) {
				throw StoreNames.invalid("table name", name,
						"'" + part + "' is a reserved word in SQL, which the database refuses as a name");
			}
		}
		return name;
	}

	/**
	 * Returns the PostgreSQL notification channel of a valid table name: the name in
	 * lower case (as PostgreSQL folds unquoted identifiers, every spelling of one table
	 * must share a channel) with {@code _changed} appended, such as
	 * {@code app.elections_changed}. A name too long for a channel is cut and ends with a
	 * hash of the whole name instead. The result consists only of letters, digits,
	 * underscores and at most one dot.
	 */
	static String channel(String validName) {
		String name = validName.toLowerCase(Locale.ROOT);
		String channel = name + "_changed";
		if (channel.length() <= MAX_CHANNEL_LENGTH) {
			return channel;
		}
		// String.hashCode is specified, so every node derives the same channel.
		String hash = HexFormat.of().toHexDigits(name.hashCode());
		return name.substring(0, MAX_CHANNEL_LENGTH - hash.length() - 1) + "_" + hash;
	}

	/**
	 * Returns the name of the table of live candidates that goes with a valid lease table
	 * name: in the same schema, with {@code _candidates} appended, such as
	 * {@code app.elections_candidates}. See {@link #derived} for a name too long.
	 */
	static String candidates(String validName) {
		return derived(validName, CANDIDATES_SUFFIX);
	}

	/**
	 * Returns the name of the table of run records that goes with a valid lease table
	 * name: in the same schema, with {@code _runs} appended, such as
	 * {@code app.elections_runs}. See {@link #derived} for a name too long.
	 */
	static String runs(String validName) {
		return derived(validName, RUNS_SUFFIX);
	}

	/**
	 * The lease table's name with a suffix, in the same schema. A name too long for a
	 * table keeps the suffix, and its cut is followed by a hash of the whole table name
	 * in lower case instead (as PostgreSQL folds unquoted identifiers, every spelling of
	 * one table must find the same table). The result is itself a valid table name.
	 */
	private static String derived(String validName, String suffix) {
		int dot = validName.indexOf('.');
		String schema = validName.substring(0, dot + 1);
		String table = validName.substring(dot + 1);
		String derived = table + suffix;
		if (derived.length() > MAX_TABLE_LENGTH) {
			// String.hashCode is specified, so every node derives the same name.
			String hash = HexFormat.of().toHexDigits(table.toLowerCase(Locale.ROOT).hashCode());
			derived = table.substring(0, MAX_TABLE_LENGTH - suffix.length() - hash.length() - 1) + "_" + hash + suffix;
		}
		return requireValid(schema + derived);
	}

}
