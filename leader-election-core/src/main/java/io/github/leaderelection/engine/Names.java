package io.github.leaderelection.engine;

import java.net.InetAddress;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Checks the group names and candidate ids that reach a store: they are always bound as
 * parameters, never pasted into queries, but must still fit every store's key. Makes the
 * default candidate id.
 */
final class Names {

	static final int MAX_LENGTH = 255;

	private Names() {
	}

	/** See {@link LeaderElectionEngine#defaultCandidateId()}. */
	static String defaultCandidateId() {
		String host;
		try {
			host = InetAddress.getLocalHost().getHostName();
		}
		catch (Exception ex) {
			host = "unknown-host";
		}
		long pid = ProcessHandle.current().pid();
		String suffix = Integer.toHexString(ThreadLocalRandom.current().nextInt(0x100000, 0x1000000));
		String id = host + "-" + pid + "-" + suffix;
		return (id.length() <= MAX_LENGTH) ? id : id.substring(id.length() - MAX_LENGTH);
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
