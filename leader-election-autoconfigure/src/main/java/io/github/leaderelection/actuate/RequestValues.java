package io.github.leaderelection.actuate;

import io.github.leaderelection.actuate.ActionFailedException.Kind;
import org.jspecify.annotations.Nullable;

/**
 * Checks and escapes the values an operator sends to the {@code leaderelection} endpoint:
 * they reach the logs and the store only once checked, and a message or log line shows
 * them only escaped and shortened, so that no request can write a line of its own into
 * the log.
 */
final class RequestValues {

	/** Longest group name or candidate id: what every store's key can hold. */
	static final int MAX_LENGTH = 255;

	/** Characters of a value that a message or log line shows at most. */
	static final int SHOWN_LENGTH = 64;

	private RequestValues() {
	}

	/**
	 * Returns the value if it is a valid group name or candidate id: not blank, at most
	 * {@value #MAX_LENGTH} characters, no control characters.
	 * @throws ActionFailedException (bad request) saying what is wrong, with the value
	 * escaped
	 */
	static String requireValid(String name, String value) {
		String problem = null;
		if (value.isBlank()) {
			problem = "must not be blank";
		}
		else if (value.length() > MAX_LENGTH) {
			problem = "must be at most " + MAX_LENGTH + " characters, but " + escape(value) + " has " + value.length();
		}
		else if (value.chars().anyMatch(Character::isISOControl)) {
			problem = "must not contain control characters: " + escape(value);
		}
		if (problem != null) {
			throw new ActionFailedException(Kind.BAD_REQUEST, "Invalid " + name + ": " + problem);
		}
		return value;
	}

	/**
	 * The value quoted, with control characters escaped ({@code \n}, {@code \u0000}) and
	 * cut to {@value #SHOWN_LENGTH} characters, for messages and logs.
	 */
	static String escape(@Nullable String value) {
		if (value == null) {
			return "null";
		}
		StringBuilder escaped = new StringBuilder("'");
		int shown = Math.min(value.length(), SHOWN_LENGTH);
		for (int i = 0; i < shown; i++) {
			char c = value.charAt(i);
			switch (c) {
				case '\n' -> escaped.append("\\n");
				case '\r' -> escaped.append("\\r");
				case '\t' -> escaped.append("\\t");
				case '\\' -> escaped.append("\\\\");
				case '\'' -> escaped.append("\\'");
				default -> {
					if (Character.isISOControl(c) || Character.getType(c) == Character.LINE_SEPARATOR
							|| Character.getType(c) == Character.PARAGRAPH_SEPARATOR) {
						escaped.append(String.format("\\u%04x", (int) c));
					}
					else {
						escaped.append(c);
					}
				}
			}
		}
		escaped.append('\'');
		if (value.length() > shown) {
			escaped.append("... (").append(value.length()).append(" characters)");
		}
		return escaped.toString();
	}

}
