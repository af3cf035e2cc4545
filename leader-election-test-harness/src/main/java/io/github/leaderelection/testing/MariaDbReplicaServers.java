package io.github.leaderelection.testing;

import java.nio.file.Path;
import java.time.Duration;

/**
 * MariaDB as a primary and a semi-synchronous replica, on loopback ports of a test's own:
 * a commit returns once the replica has it in its relay log, so a failover that applies
 * that log first loses no committed transaction. Clients reach the primary through an
 * address that the failover points at the promoted server (a virtual IP, MaxScale,
 * ProxySQL): in a test, a {@link TcpProxy} switched with {@link TcpProxy#switchTo};
 * {@link #failOver} kills the primary and promotes the replica, as a failover manager
 * would.
 */
public final class MariaDbReplicaServers extends ReplicatedPair<MariaDbServer> {

	private static final Duration CATCH_UP = Duration.ofSeconds(60);

	/** Commits of the primary without the replica's acknowledgement, when it had one. */
	private long unacknowledged;

	public MariaDbReplicaServers(Path directory) throws Exception {
		super(directory, MariaDbReplicaServers::server);
	}

	/** Server a gets id 1, server b id 2. */
	private static MariaDbServer server(Path directory) throws Exception {
		return new MariaDbServer(directory, MariaDbServer.replicated(directory.endsWith("a") ? 1 : 2));
	}

	@Override
	public void start() throws Exception {
		primary().start();
		replica().startReplicaOf(primary());
		this.unacknowledged = primary().awaitSemiSynchronousReplica(CATCH_UP);
	}

	/**
	 * Checks that the primary committed nothing without the replica's acknowledgement.
	 * @throws IllegalStateException if it did (semi-synchronous replication fell back to
	 * asynchronous): a failover could lose it, and the run would not test what it claims
	 */
	@Override
	protected void beforeFailOver(MariaDbServer primary) throws Exception {
		long unacknowledgedNow = primary.commitsWithoutReplica();
		if (unacknowledgedNow != this.unacknowledged) {
			throw new IllegalStateException(
					"MariaDB on port " + primary.port() + " committed " + (unacknowledgedNow - this.unacknowledged)
							+ " transaction(s) without its replica's acknowledgement; see " + this.directory);
		}
	}

	/**
	 * The primary was killed ({@code kill -9}): the replica applies what it received,
	 * then becomes the primary.
	 */
	@Override
	protected void promote(MariaDbServer replica) throws Exception {
		replica.promote();
	}

	/**
	 * Starts the old primary again from nothing, as the new primary's replica, and waits
	 * until it acknowledges its commits.
	 */
	@Override
	public void rejoin(int port) throws Exception {
		stoppedServer(port).startReplicaOf(primary());
		this.unacknowledged = primary().awaitSemiSynchronousReplica(CATCH_UP);
	}

	@Override
	public String toString() {
		return "MariaDB with a semi-synchronous replica on ports " + first().port() + " and " + second().port();
	}

}
