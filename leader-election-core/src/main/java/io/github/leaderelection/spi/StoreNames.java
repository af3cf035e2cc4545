package io.github.leaderelection.spi;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The check of a name that a store is configured with and builds its keys, paths or SQL
 * from (an etcd namespace, a Redis key prefix, a ZooKeeper base path, a table name), and
 * the one wording of its failure that every store uses: "Invalid etcd namespace 'a b': it
 * must match ^...$ and have at most 200 characters". The message names the value and the
 * rule, so that whoever configured it can fix it; each store keeps its own rule.
 *
 * <pre class="code">
 * this.namespace = StoreNames.requireMatching("etcd namespace", namespace, NAMESPACE, 200);
 * </pre>
 */
public final class StoreNames {

	private StoreNames() {
	}

	/**
	 * Returns the value if it matches the rule.
	 * @param what what the value is, for the message: {@code "base path"}
	 * @param value the configured value
	 * @param rule the pattern the whole value must match
	 * @return the value
	 * @throws NullPointerException naming {@code what} if the value is {@code null}
	 * @throws IllegalArgumentException naming the value and the rule otherwise
	 */
	public static String requireMatching(String what, String value, Pattern rule) {
		Objects.requireNonNull(value, what);
		if (!rule.matcher(value).matches()) {
			throw invalid(what, value, "it must match " + rule.pattern());
		}
		return value;
	}

	/**
	 * Returns the value if it matches the rule and has at most {@code maxLength}
	 * characters.
	 * @param what what the value is, for the message: {@code "Redis key prefix"}
	 * @param value the configured value
	 * @param rule the pattern the whole value must match
	 * @param maxLength the most characters the value may have
	 * @return the value
	 * @throws NullPointerException naming {@code what} if the value is {@code null}
	 * @throws IllegalArgumentException naming the value, the rule and the length
	 * otherwise
	 */
	public static String requireMatching(String what, String value, Pattern rule, int maxLength) {
		Objects.requireNonNull(value, what);
		if (value.length() > maxLength || !rule.matcher(value).matches()) {
			throw invalid(what, value,
					"it must match " + rule.pattern() + " and have at most " + maxLength + " characters");
		}
		return value;
	}

	/**
	 * The failure of a value that breaks a rule of the store's own, in the same wording:
	 * "Invalid (what) '(value)': (why)".
	 * @param what what the value is, for the message: {@code "table name"}
	 * @param value the configured value
	 * @param why the rule it breaks, as it reads after the colon:
	 * {@code "/zookeeper is ZooKeeper's own"}
	 * @return the exception, for the caller to throw
	 */
	public static IllegalArgumentException invalid(String what, String value, String why) {
		return new IllegalArgumentException("Invalid " + what + " '" + value + "': " + why);
	}

}
