package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static io.github.leaderelection.jdbc.SqlRunner.prepare;

/**
 * Chooses, once per store, how its statements on many groups name them
 * ({@link BatchSql.Way}): from the database, the server version that the driver reports,
 * and on MySQL and MariaDB the types of the table's name columns.
 */
final class BatchSqlChooser {

	private static final Logger logger = LoggerFactory.getLogger(BatchSqlChooser.class);

	private static final Pattern VERSION = Pattern.compile("(\\d+)\\.(\\d+)\\.(\\d+)");

	/** Character sets and collations are put into SQL text, so only such names pass. */
	private static final Pattern CHARSET_OR_COLLATION = Pattern.compile("[A-Za-z0-9_]+");

	private static final String COLUMN_TYPES = "SELECT COLUMN_NAME, CHARACTER_SET_NAME, COLLATION_NAME, "
			+ "CHARACTER_MAXIMUM_LENGTH FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) "
			+ "AND TABLE_NAME = ? AND COLUMN_NAME IN ('group_name', 'holder_id')";

	private BatchSqlChooser() {
	}

	/**
	 * Returns the statements for the store's table, or {@code null} when they cannot be
	 * chosen yet: the server has {@code JSON_TABLE} but the table was not found (it may
	 * not exist yet). The caller then names the groups in lists, and asks again next
	 * time.
	 * @param table a valid table name, plain or schema-qualified
	 */
	static @Nullable BatchSql choose(Connection connection, SqlDialect dialect, String table, Duration timeout)
			throws SQLException {
		DatabaseMetaData metaData = connection.getMetaData();
		String server = metaData.getDatabaseProductName() + " " + metaData.getDatabaseProductVersion();
		BatchSql chosen = switch (dialect) {
			case POSTGRESQL -> BatchSql.arrays(table);
			case H2 -> BatchSql.lists(dialect, table);
			case MYSQL -> hasJsonTable(metaData.getDatabaseProductName(), metaData.getDatabaseProductVersion())
					? jsonTable(connection, table, server, timeout) : BatchSql.lists(dialect, table);
		};
		if (chosen != null) {
			logger.debug("Statements on many groups in table {} on {} name the groups {}", table, server,
					switch (chosen.way()) {
						case ARRAYS -> "in arrays, one statement for any number";
						case JSON_TABLE -> "in a JSON array read with JSON_TABLE, one statement for any number";
						case LISTS -> "in lists, one statement for every " + BatchSql.MAX_GROUPS_PER_LIST
								+ ((dialect == SqlDialect.MYSQL) ? " (JSON_TABLE needs MySQL 8.0.4 or MariaDB 10.6)"
										: "");
					});
		}
		return chosen;
	}

	/**
	 * Whether a MySQL or MariaDB server has {@code JSON_TABLE}: MySQL from 8.0.4, MariaDB
	 * from 10.6. MariaDB reports versions before 11 with the prefix {@code 5.5.5-} to
	 * MySQL's driver. An unknown version counts as too old: lists work everywhere.
	 * @param productName what {@link DatabaseMetaData#getDatabaseProductName()} reports
	 * @param productVersion what {@link DatabaseMetaData#getDatabaseProductVersion()}
	 * reports, such as {@code 10.11.6-MariaDB-0+deb12u1} or {@code 8.4.3}
	 */
	static boolean hasJsonTable(String productName, String productVersion) {
		boolean mariaDb = productName.equalsIgnoreCase("MariaDB")
				|| productVersion.toLowerCase(Locale.ROOT).contains("mariadb");
		String version = (mariaDb && productVersion.startsWith("5.5.5-")) ? productVersion.substring(6)
				: productVersion;
		Matcher numbers = VERSION.matcher(version);
		if (!numbers.lookingAt()) {
			return false;
		}
		int[] actual = { Integer.parseInt(numbers.group(1)), Integer.parseInt(numbers.group(2)),
				Integer.parseInt(numbers.group(3)) };
		int[] required = mariaDb ? new int[] { 10, 6, 0 } : new int[] { 8, 0, 4 };
		for (int i = 0; i < actual.length; i++) {
			if (actual[i] != required[i]) {
				return actual[i] > required[i];
			}
		}
		return true;
	}

	private static @Nullable BatchSql jsonTable(Connection connection, String table, String server, Duration timeout)
			throws SQLException {
		int dot = table.indexOf('.');
		Map<String, String> types = new HashMap<>();
		try (PreparedStatement statement = prepare(connection, COLUMN_TYPES, timeout,
				(dot >= 0) ? table.substring(0, dot) : null, table.substring(dot + 1));
				ResultSet columns = statement.executeQuery()) {
			while (columns.next()) {
				String type = columnType(columns.getString(2), columns.getString(3), columns.getLong(4));
				types.put(columns.getString(1).toLowerCase(Locale.ROOT), type);
			}
		}
		if (!types.containsKey("group_name") || !types.containsKey("holder_id")) {
			logger.debug("Did not find the columns of table {} on {}: statements on many groups name them in lists "
					+ "until it is found", table, server);
			return null;
		}
		String groupType = types.get("group_name");
		String holderType = types.get("holder_id");
		if (groupType.isEmpty() || holderType.isEmpty()) {
			logger.debug("The names in table {} on {} are not character strings that JSON_TABLE can match on the "
					+ "primary key; statements on many groups name them in lists", table, server);
			return BatchSql.lists(SqlDialect.MYSQL, table);
		}
		return BatchSql.jsonTable(table, groupType, holderType);
	}

	/**
	 * Returns the type of a {@code JSON_TABLE} column that compares with a table's column
	 * as a bound value would: with its character set and collation, and one character
	 * longer, so that a name too long for the table is cut (which MySQL and MariaDB do
	 * with a mere warning) to one still too long, which matches no row rather than
	 * another group's. Returns an empty string for a column that is not a character
	 * string.
	 */
	private static String columnType(@Nullable String charset, @Nullable String collation, long length) {
		if (charset == null || collation == null || length <= 0 || length >= 16_000
				|| !CHARSET_OR_COLLATION.matcher(charset).matches()
				|| !CHARSET_OR_COLLATION.matcher(collation).matches()) {
			return "";
		}
		return "VARCHAR(" + (length + 1) + ") CHARACTER SET " + charset + " COLLATE " + collation;
	}

}
