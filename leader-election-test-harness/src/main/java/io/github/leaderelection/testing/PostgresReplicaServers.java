package io.github.leaderelection.testing;

import java.nio.file.Path;
import java.time.Duration;

/**
 * PostgreSQL as a primary and a synchronous streaming replica, on loopback ports of a
 * test's own: every commit returns once the replica has it on disk, so a failover loses
 * no committed transaction. Clients name both servers and connect to the primary
 * ({@code targetServerType=primary}); {@link #failOver} kills the primary and promotes
 * the replica, as a failover manager (Patroni, repmgr, a cloud's) would.
 */
public final class PostgresReplicaServers extends ReplicatedPair<PostgresServer> {

	private static final Duration CATCH_UP = Duration.ofSeconds(60);

	public PostgresReplicaServers(Path directory) throws Exception {
		super(directory, PostgresServer::new);
	}

	@Override
	public void start() throws Exception {
		primary().start();
		replica().startStandbyOf(primary());
		primary().requireSynchronousStandby(CATCH_UP);
	}

	/** PostgreSQL's immediate shutdown killed the primary; the replica becomes one. */
	@Override
	protected void promote(PostgresServer replica) throws Exception {
		replica.promote();
	}

	/** A fresh base backup of the new primary, which then waits for it again. */
	@Override
	public void rejoin(int port) throws Exception {
		stoppedServer(port).startStandbyOf(primary());
		primary().requireSynchronousStandby(CATCH_UP);
	}

	/** Both servers: a client tries them in turn and keeps the primary. */
	@Override
	public String clientAddress() {
		return "127.0.0.1:" + first().port() + ",127.0.0.1:" + second().port();
	}

	@Override
	public String toString() {
		return "PostgreSQL with a synchronous replica on ports " + clientAddress();
	}

}
