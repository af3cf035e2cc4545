package io.github.leaderelection.testing;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A database server as a primary and a replica, which a test fails over (see
 * {@link ReplicatedStore}); what the pairs of each database have in common. The pair
 * stands for its primary: its port, its JDBC URL, whether it answers. It cannot be
 * stopped or restarted as one server: it is failed over instead.
 *
 * @param <S> the kind of server
 */
public abstract class ReplicatedPair<S extends StoreServer> extends StoreServer implements ReplicatedStore {

	private final S first;

	private final S second;

	private boolean firstIsPrimary = true;

	/**
	 * @param directory the pair's directory, emptied first, in which the servers get the
	 * sub-directories {@code a} (the first primary) and {@code b}
	 * @param server makes a server in a directory, after the pair's has been emptied
	 */
	protected ReplicatedPair(Path directory, ServerFactory<S> server) throws Exception {
		super(directory);
		this.first = server.create(directory.resolve("a"));
		this.second = server.create(directory.resolve("b"));
	}

	/** The server that is the primary now. */
	protected S primary() {
		return this.firstIsPrimary ? this.first : this.second;
	}

	/**
	 * The other server: the replica, or the old primary between a failover and its
	 * rejoin.
	 */
	protected S replica() {
		return this.firstIsPrimary ? this.second : this.first;
	}

	/**
	 * Kills the primary as a crash does, waits as long as the failure goes undetected,
	 * then promotes the replica.
	 */
	@Override
	public final int failOver(Duration undetected) throws Exception {
		S old = primary();
		beforeFailOver(old);
		old.stop(true);
		Thread.sleep(undetected.toMillis());
		this.firstIsPrimary = !this.firstIsPrimary;
		promote(primary());
		return old.port();
	}

	/**
	 * Checks, before a failover, that the primary it kills lost nothing a failover could
	 * lose; nothing by default.
	 * @param primary the primary about to be killed
	 */
	protected void beforeFailOver(S primary) throws Exception {
	}

	/**
	 * Makes the replica, which this pair now counts as the primary, accept writes.
	 * @param replica the server to promote
	 */
	protected abstract void promote(S replica) throws Exception;

	/**
	 * The server that a rejoin starts again, which must be the one a failover stopped.
	 * @param port what {@link #failOver} returned
	 */
	protected S stoppedServer(int port) {
		S stopped = replica();
		if (stopped.port() != port) {
			throw new IllegalArgumentException("No stopped server of this pair on port " + port);
		}
		return stopped;
	}

	/** The servers, the first primary first, for clients that name both. */
	protected S first() {
		return this.first;
	}

	protected S second() {
		return this.second;
	}

	@Override
	public int primaryPort() {
		return primary().port();
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
		return primary().answers();
	}

	/** The primary's: it creates tables, which the replica receives. */
	@Override
	public String jdbcUrl() {
		return primary().jdbcUrl();
	}

	@Override
	public String jdbcUser() {
		return primary().jdbcUser();
	}

	@Override
	public void close() throws Exception {
		Exception failure = null;
		for (S server : List.of(this.first, this.second)) {
			try {
				server.close();
			}
			catch (Exception ex) {
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

	/**
	 * Makes one server of the pair.
	 *
	 * @param <S> the kind of server
	 */
	@FunctionalInterface
	protected interface ServerFactory<S> {

		S create(Path directory) throws Exception;

	}

}
