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
public final class MariaDbReplicaServers extends StoreServer implements ReplicatedStore {

	private static final Duration CATCH_UP = Duration.ofSeconds(60);

	private final MariaDbServer[] servers = new MariaDbServer[2];

	private int primary;

	/** Commits of the primary without the replica's acknowledgement, when it had one. */
	private long unacknowledged;

	public MariaDbReplicaServers(Path directory) throws Exception {
		super(directory);
		this.servers[0] = new MariaDbServer(directory.resolve("a"), MariaDbServer.replicated(1));
		this.servers[1] = new MariaDbServer(directory.resolve("b"), MariaDbServer.replicated(2));
	}

	@Override
	public void start() throws Exception {
		this.servers[0].start();
		this.servers[1].startReplicaOf(this.servers[0]);
		this.primary = 0;
		this.unacknowledged = this.servers[0].awaitSemiSynchronousReplica(CATCH_UP);
	}

	/**
	 * Kills the primary ({@code kill -9}), then promotes the replica once it has applied
	 * what it received.
	 * @throws IllegalStateException if the primary committed a transaction that the
	 * replica did not acknowledge (semi-synchronous replication fell back to
	 * asynchronous): a failover could lose it, and the run would not test what it claims
	 */
	@Override
	public int failOver(Duration undetected) throws Exception {
		MariaDbServer old = this.servers[this.primary];
		long unacknowledgedNow = old.commitsWithoutReplica();
		if (unacknowledgedNow != this.unacknowledged) {
			throw new IllegalStateException(
					"MariaDB on port " + old.port() + " committed " + (unacknowledgedNow - this.unacknowledged)
							+ " transaction(s) without its replica's acknowledgement; see " + this.directory);
		}
		old.stop(true);
		Thread.sleep(undetected.toMillis());
		this.primary = 1 - this.primary;
		this.servers[this.primary].promote();
		return old.port();
	}

	/**
	 * Starts the old primary again from nothing, as the new primary's replica, and waits
	 * until it acknowledges its commits.
	 */
	@Override
	public void rejoin(int port) throws Exception {
		MariaDbServer replica = this.servers[1 - this.primary];
		if (replica.port() != port) {
			throw new IllegalArgumentException("No stopped server of this pair on port " + port);
		}
		replica.startReplicaOf(this.servers[this.primary]);
		this.unacknowledged = this.servers[this.primary].awaitSemiSynchronousReplica(CATCH_UP);
	}

	@Override
	public int primaryPort() {
		return this.servers[this.primary].port();
	}

	@Override
	public int port() {
		return primaryPort();
	}

	@Override
	public void stop(boolean crash) {
		throw new UnsupportedOperationException("Fail the primary over instead");
	}

	@Override
	public void restart() {
		throw new UnsupportedOperationException("Fail the primary over instead");
	}

	@Override
	public boolean answers() {
		return this.servers[this.primary].answers();
	}

	/** The primary's. */
	@Override
	public String jdbcUrl() {
		return this.servers[this.primary].jdbcUrl();
	}

	@Override
	public String jdbcUser() {
		return "root";
	}

	@Override
	public void close() throws Exception {
		for (MariaDbServer server : this.servers) {
			server.close();
		}
	}

	@Override
	public String toString() {
		return "MariaDB with a semi-synchronous replica on ports " + this.servers[0].port() + " and "
				+ this.servers[1].port();
	}

}
