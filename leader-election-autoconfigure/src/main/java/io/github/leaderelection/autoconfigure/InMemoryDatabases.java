package io.github.leaderelection.autoconfigure;

import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * Recognizes the JDBC URLs of in-memory databases, which live inside one process: every
 * instance of an application that elects through one has a database of its own, and
 * leads.
 */
final class InMemoryDatabases {

	/**
	 * H2, HSQLDB and Derby in memory, also behind a wrapping driver such as
	 * {@code jdbc:p6spy:h2:mem:}. An in-memory database served over the network
	 * ({@code jdbc:h2:tcp://host/mem:name}) is shared, and does not match.
	 */
	private static final List<String> MARKERS = List.of(":h2:mem:", ":hsqldb:mem:", ":derby:memory:");

	private InMemoryDatabases() {
	}

	static boolean isInMemoryUrl(@Nullable String url) {
		if (url == null) {
			return false;
		}
		String lowerCase = url.toLowerCase(Locale.ROOT);
		return lowerCase.startsWith("jdbc:") && MARKERS.stream().anyMatch(lowerCase::contains);
	}

}
