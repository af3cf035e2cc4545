package io.github.leaderelection.jdbc;

import java.util.List;

import io.github.leaderelection.spi.Lease;

/**
 * Writes group names and leases as the JSON arrays that MySQL and MariaDB read with
 * {@code JSON_TABLE}: one bound value for any number of groups. Every name is a JSON
 * string, escaped as JSON requires, so it reaches the database as data whatever it holds.
 */
final class JsonArrays {

	private JsonArrays() {
	}

	/** Returns the names as a JSON array of strings, in order. */
	static String of(List<String> names) {
		StringBuilder json = new StringBuilder(names.size() * 48 + 2).append('[');
		for (int i = 0; i < names.size(); i++) {
			if (i > 0) {
				json.append(',');
			}
			appendString(json, names.get(i));
		}
		return json.append(']').toString();
	}

	/**
	 * Returns the leases, each with a holder, as a JSON array of
	 * {@code [group, holder, term]} arrays, in order.
	 */
	static String ofLeases(List<Lease> leases) {
		StringBuilder json = new StringBuilder(leases.size() * 96 + 2).append('[');
		for (int i = 0; i < leases.size(); i++) {
			Lease lease = leases.get(i);
			if (i > 0) {
				json.append(',');
			}
			json.append('[');
			appendString(json, lease.group());
			json.append(',');
			appendString(json, lease.holder());
			json.append(',').append(lease.term()).append(']');
		}
		return json.append(']').toString();
	}

	private static void appendString(StringBuilder json, String value) {
		json.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == '"' || c == '\\') {
				json.append('\\').append(c);
			}
			else if (c < 0x20) {
				json.append(String.format("\\u%04x", (int) c));
			}
			else {
				json.append(c);
			}
		}
		json.append('"');
	}

}
