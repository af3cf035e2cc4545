package io.github.leaderelection.testing;

import java.time.Duration;

/**
 * A store run as a primary and a replica, which a test can fail over: the primary dies,
 * the replica is promoted, and the old primary comes back as the new one's replica.
 */
public interface ReplicatedStore {

	/**
	 * Kills the primary and returns once the replica has been promoted and takes writes.
	 * @param undetected how long the primary is down before the replica is promoted, as a
	 * failover manager takes to notice; a store that detects failures itself (Redis
	 * Sentinel) takes its own time
	 * @return the port of the server that was the primary, for {@link #rejoin}
	 */
	int failOver(Duration undetected) throws Exception;

	/**
	 * Starts the server that was the primary again as the new primary's replica, and
	 * returns once it has caught up: the next failover has a replica to promote.
	 * @param port what {@link #failOver} returned
	 */
	void rejoin(int port) throws Exception;

	/** The port of the primary now. */
	int primaryPort();

}
