package io.github.leaderelection;

/**
 * Thrown when an election operation that must reach the store could not.
 */
public class LeaderElectionException extends RuntimeException {

	public LeaderElectionException(String message) {
		super(message);
	}

	public LeaderElectionException(String message, Throwable cause) {
		super(message, cause);
	}

}
