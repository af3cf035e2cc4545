package io.github.leaderelection.testing;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * PostgreSQL as a primary and a synchronous streaming replica, on loopback ports of a
 * test's own: every commit returns once the replica has it on disk, so a failover loses
 * no committed transaction. Clients name both servers and connect to the primary
 * ({@code targetServerType=primary}); {@link #failOver} kills the primary and promotes
 * the replica, as a failover manager (Patroni, repmgr, a cloud's) would.
 */
public final class PostgresReplicaServers extends StoreServer implements ReplicatedStore {

	private static final Duration CATCH_UP = Duration.ofSeconds(60);

	private final PostgresServer[] servers = new PostgresServer[2];

	private int primary;

	public PostgresReplicaServers(Path directory) throws Exception {
		super(directory);
		this.servers[0] = new PostgresServer(directory.resolve("a"));
		this.servers[1] = new PostgresServer(directory.resolve("b"));
	}

	@Override
	public void start() throws Exception {
		this.servers[0].start();
		this.servers[1].startStandbyOf(this.servers[0]);
		this.servers[0].requireSynchronousStandby(CATCH_UP);
		this.primary = 0;
	}

	/**
	 * Kills the primary as a crash does (PostgreSQL's immediate shutdown), then promotes
	 * the replica.
	 */
	@Override
	public int failOver(Duration undetected) throws Exception {
		PostgresServer old = this.servers[this.primary];
		old.stop(true);
		Thread.sleep(undetected.toMillis());
		this.primary = 1 - this.primary;
		this.servers[this.primary].promote();
		return old.port();
	}

	/** A fresh base backup of the new primary, which then waits for it again. */
	@Override
	public void rejoin(int port) throws Exception {
		PostgresServer standby = this.servers[1 - this.primary];
		if (standby.port() != port) {
			throw new IllegalArgumentException("No stopped server of this pair on port " + port);
		}
		standby.startStandbyOf(this.servers[this.primary]);
		this.servers[this.primary].requireSynchronousStandby(CATCH_UP);
	}

	@Override
	public int primaryPort() {
		return this.servers[this.primary].port();
	}

	/** Both servers: a client tries them in turn and keeps the primary. */
	@Override
	public String clientAddress() {
		return "127.0.0.1:" + this.servers[0].port() + ",127.0.0.1:" + this.servers[1].port();
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

	/** The primary's: it creates tables, which the replica receives. */
	@Override
	public String jdbcUrl() {
		return this.servers[this.primary].jdbcUrl();
	}

	@Override
	public String jdbcUser() {
		return "postgres";
	}

	@Override
	public void close() throws Exception {
		for (PostgresServer server : this.servers) {
			server.close();
		}
	}

	@Override
	public String toString() {
		return "PostgreSQL with a synchronous replica on ports " + clientAddress();
	}

}
