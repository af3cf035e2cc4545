package io.github.leaderelection.engine;

/**
 * Checks the group names and candidate ids that reach a store: they are always bound as
 * parameters, never pasted into queries, but must still fit every store's key.
 */
final class Names {

	static final int MAX_LENGTH = 255;

	private Names() {
	}

	static String requireValid(String kind, String value) {
		if (value == null || value.isBlank()) {
			throw new IllegalArgumentException(kind + " must not be blank");
		}
		if (value.length() > MAX_LENGTH) {
			throw new IllegalArgumentException(kind + " must be at most " + MAX_LENGTH + " characters, but '"
					+ value.substring(0, 32) + "...' has " + value.length());
		}
		if (value.chars().anyMatch(Character::isISOControl)) {
			throw new IllegalArgumentException(kind + " must not contain control characters: '" + value.strip() + "'");
		}
		return value;
	}

}
