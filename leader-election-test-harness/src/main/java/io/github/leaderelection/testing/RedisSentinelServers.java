package io.github.leaderelection.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;

/**
 * Redis as a Sentinel setup runs it, on loopback ports of a test's own: a master, a
 * replica and one Sentinel that alone decides failovers of the master named
 * {@value #MASTER_NAME}. Clients ask the Sentinel ({@link #port()}) where the master is.
 * No server keeps anything on disk, so a server killed comes back empty, and the Sentinel
 * makes it a replica of the new master.
 */
public final class RedisSentinelServers extends StoreServer implements ReplicatedStore {

	public static final String MASTER_NAME = "mymaster";

	/**
	 * How long the master must not answer before the Sentinel fails it over. Twice the
	 * Sentinel's ping period (1 s): at 1 s, the Sentinel took a master it had just
	 * promoted for down before its first ping was answered, and failed it over to the
	 * replica that had only begun to copy it, while the first one still took writes.
	 */
	private static final Duration DOWN_AFTER = Duration.ofMillis(2000);

	/** The Sentinel starts no second failover of the master within twice this. */
	private static final Duration FAILOVER_TIMEOUT = Duration.ofSeconds(3);

	private static final Duration FAILOVER_WAIT = Duration.ofSeconds(60);

	private static final Pattern MASTER_ADDRESS = Pattern
		.compile("name=" + MASTER_NAME + ",status=(\\w+),address=127\\.0\\.0\\.1:(\\d+),slaves=(\\d+)");

	private final LocalRedisServer[] servers = new LocalRedisServer[2];

	private LocalRedisServer sentinel;

	public RedisSentinelServers(Path directory) throws IOException {
		super(directory);
	}

	@Override
	public void start() {
		this.servers[0] = LocalRedisServer.start();
		this.servers[1] = LocalRedisServer.start("--replicaof", "127.0.0.1", Integer.toString(this.servers[0].port()));
		this.sentinel = LocalRedisServer.startSentinel(this.servers[0].port(), DOWN_AFTER, FAILOVER_TIMEOUT);
		awaitReplicated();
	}

	/** The Sentinel's port, where clients ask for the master. */
	@Override
	public int port() {
		return this.sentinel.port();
	}

	/**
	 * Kills the master ({@code kill -9}), waits until the Sentinel has promoted the
	 * replica, and returns. The Sentinel decides when: a second after the master stopped
	 * answering, then its election. The old master stays down: see {@link #rejoin}.
	 * @return the port of the server that was the master
	 */
	@Override
	public int failOver(Duration undetected) {
		LocalRedisServer master = server(primaryPort());
		master.kill();
		await().atMost(FAILOVER_WAIT)
			.pollInterval(Duration.ofMillis(10))
			.until(() -> primaryPort() != master.port()
					&& server(primaryPort()).command("INFO", "replication").contains("role:master"));
		return master.port();
	}

	/**
	 * Starts the server that was the master again, empty, as the new master's replica,
	 * waits until it has the new master's data, and returns. It does not come back as a
	 * master: an empty master that the Sentinel has not yet turned into a replica could
	 * take clients, and its replica's data with it (Redis's own advice: no automatic
	 * restart of a master that keeps nothing on disk).
	 * @param port the port {@link #failOver} returned
	 */
	@Override
	public void rejoin(int port) throws IOException {
		server(port).restartAsReplicaOf(primaryPort());
		awaitReplicated();
	}

	/**
	 * Stops the whole setup for {@code restart-store}, which does not apply here: use
	 * {@link #failOver}.
	 */
	@Override
	public void stop(boolean crash) {
		throw new UnsupportedOperationException("Fail the master over instead");
	}

	@Override
	public void restart() {
		throw new UnsupportedOperationException("Fail the master over instead");
	}

	@Override
	public boolean answers() {
		return this.sentinel != null && this.sentinel.answers() && server(primaryPort()).answers();
	}

	/** Stops every server, keeping their logs in this setup's directory. */
	@Override
	public void close() {
		for (LocalRedisServer server : new LocalRedisServer[] { this.sentinel, this.servers[0], this.servers[1] }) {
			if (server != null) {
				String name = (server == this.sentinel) ? "sentinel" : "redis-" + server.port();
				try {
					Files.copy(server.log(), this.directory.resolve(name + ".log"),
							StandardCopyOption.REPLACE_EXISTING);
				}
				catch (IOException ex) {
					// the log is lost with the server's directory
				}
				server.close();
			}
		}
	}

	/** The master's port, as the Sentinel tells it. */
	@Override
	public int primaryPort() {
		Matcher matcher = MASTER_ADDRESS.matcher(this.sentinel.command("INFO", "sentinel"));
		if (!matcher.find()) {
			throw new IllegalStateException("The Sentinel does not know " + MASTER_NAME);
		}
		return Integer.parseInt(matcher.group(2));
	}

	/**
	 * Waits until the Sentinel sees the master, and the master has an online replica that
	 * caught up with it, so that the next failover has a replica to promote.
	 */
	private void awaitReplicated() {
		await().atMost(FAILOVER_WAIT).pollInterval(Duration.ofMillis(50)).until(() -> {
			String info = this.sentinel.command("INFO", "sentinel");
			if (!info.contains("status=ok")) {
				return false;
			}
			String replication = server(primaryPort()).command("INFO", "replication");
			return replication.contains("role:master") && replication.contains("connected_slaves:1")
					&& replication.contains("state=online");
		});
	}

	private LocalRedisServer server(int port) {
		for (LocalRedisServer server : this.servers) {
			if (server.port() == port) {
				return server;
			}
		}
		throw new IllegalStateException("No server of this setup on port " + port);
	}

	@Override
	public String toString() {
		return "Redis with a replica and a Sentinel on port " + port();
	}

}
