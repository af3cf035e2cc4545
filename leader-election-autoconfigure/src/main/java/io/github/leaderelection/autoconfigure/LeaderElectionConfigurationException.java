package io.github.leaderelection.autoconfigure;

import org.jspecify.annotations.Nullable;

/**
 * Thrown at startup when the leader election configuration cannot work; the message names
 * the property and its value, and {@link #action()} says how to fix it.
 */
class LeaderElectionConfigurationException extends RuntimeException {

	private final String action;

	LeaderElectionConfigurationException(String description, String action) {
		this(description, action, null);
	}

	LeaderElectionConfigurationException(String description, String action, @Nullable Throwable cause) {
		super(description, cause);
		this.action = action;
	}

	String action() {
		return this.action;
	}

}
