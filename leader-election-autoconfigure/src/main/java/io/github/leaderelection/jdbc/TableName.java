package io.github.leaderelection.jdbc;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The check that makes a configured table name safe to put into SQL text.
 */
final class TableName {

	/** The rule for a table name and for each part of a schema-qualified one. */
	static final String PATTERN = "^[A-Za-z_][A-Za-z0-9_]{0,62}$";

	private static final Pattern PART = Pattern.compile(PATTERN);

	private TableName() {
	}

	/**
	 * Returns the name if it is a plain identifier or {@code schema.table} made of two.
	 * @throws IllegalArgumentException naming the value and the rule otherwise
	 */
	static String requireValid(String name) {
		Objects.requireNonNull(name, "tableName");
		String[] parts = name.split("\\.", -1);
		if (parts.length > 2 || !PART.matcher(parts[0]).matches()
				|| (parts.length == 2 && !PART.matcher(parts[1]).matches())) {
			throw new IllegalArgumentException("Invalid table name '" + name + "': it must match " + PATTERN
					+ ", or be schema.table with each part matching it");
		}
		return name;
	}

}
