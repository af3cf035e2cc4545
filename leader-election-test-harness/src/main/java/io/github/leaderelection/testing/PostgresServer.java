package io.github.leaderelection.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A PostgreSQL server of a test's own, run as the {@code postgres} operating system user
 * when the harness runs as root (PostgreSQL refuses root).
 *
 * <p>
 * Without {@code fsync}: committed transactions are in the operating system when the
 * server process dies, which is the crash the chaos harness injects ({@code SIGQUIT},
 * PostgreSQL's immediate shutdown, which recovers from its log at the next start), though
 * not one of the machine.
 */
public final class PostgresServer extends StoreServer {

	private final Path bin;

	private final boolean asRoot;

	public PostgresServer(Path directory) throws Exception {
		super(directory);
		this.bin = binaries();
		this.asRoot = "root".equals(System.getProperty("user.name"));
	}

	@Override
	public void start() throws Exception {
		Path data = data();
		ownDirectory();
		run(asUser(List.of(this.bin.resolve("initdb").toString(), "-D", data.toString(), "-U", "postgres",
				"--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")), this.directory.resolve("initdb.log"));
		restart();
		try (Connection connection = DriverManager.getConnection(url("postgres"), "postgres", "");
				Statement statement = connection.createStatement()) {
			statement.execute("CREATE DATABASE " + DATABASE);
		}
	}

	private void ownDirectory() throws IOException {
		if (this.asRoot) {
			UserPrincipal postgres = this.directory.getFileSystem()
				.getUserPrincipalLookupService()
				.lookupPrincipalByName("postgres");
			Files.setOwner(this.directory, postgres);
		}
	}

	/**
	 * Starts this server, from nothing, as a streaming replica of the primary: a base
	 * backup of it, then a hot standby that follows its log.
	 */
	public void startStandbyOf(PostgresServer primary) throws Exception {
		Path data = data();
		if (Files.exists(data)) {
			try (Stream<Path> files = Files.walk(data)) {
				for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
					Files.deleteIfExists(file);
				}
			}
		}
		ownDirectory();
		run(asUser(List.of(this.bin.resolve("pg_basebackup").toString(), "-h", "127.0.0.1", "-p",
				Integer.toString(primary.port), "-U", "postgres", "-D", data.toString(), "-R", "-X", "stream",
				"--checkpoint=fast", "--no-sync")), this.directory.resolve("basebackup.log"));
		restart();
	}

	/**
	 * Makes this standby the primary, and lets it commit without a standby until one
	 * joins (its configuration came from a primary that waited for one).
	 */
	public void promote() throws SQLException {
		try (Connection connection = DriverManager.getConnection(url("postgres"), "postgres", "");
				Statement statement = connection.createStatement()) {
			statement.execute("SELECT pg_promote(true, 60)");
			statement.execute("ALTER SYSTEM RESET synchronous_standby_names");
			statement.execute("SELECT pg_reload_conf()");
		}
	}

	/**
	 * Waits until a standby streams from this primary, then makes every commit wait until
	 * the standby has it on disk ({@code synchronous_standby_names = '*'}, with
	 * {@code synchronous_commit} at its default {@code on}).
	 */
	public void requireSynchronousStandby(Duration timeout) throws Exception {
		long deadline = System.nanoTime() + timeout.toNanos();
		try (Connection connection = DriverManager.getConnection(url("postgres"), "postgres", "");
				Statement statement = connection.createStatement()) {
			while (!answersTrue(statement, "SELECT count(*) > 0 FROM pg_stat_replication WHERE state = 'streaming'")) {
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("No standby streams from PostgreSQL on port " + this.port
							+ " within " + timeout + "; see " + this.directory);
				}
				Thread.sleep(50);
			}
			statement.execute("ALTER SYSTEM SET synchronous_standby_names = '*'");
			statement.execute("SELECT pg_reload_conf()");
			while (!answersTrue(statement, "SELECT count(*) > 0 FROM pg_stat_replication WHERE sync_state = 'sync'")) {
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("The standby of PostgreSQL on port " + this.port
							+ " did not become synchronous within " + timeout);
				}
				Thread.sleep(50);
			}
		}
	}

	private static boolean answersTrue(Statement statement, String query) throws SQLException {
		try (ResultSet result = statement.executeQuery(query)) {
			return result.next() && result.getBoolean(1);
		}
	}

	@Override
	public void restart() throws Exception {
		launch(asUser(List.of(this.bin.resolve("postgres").toString(), "-D", data().toString(), "-p",
				Integer.toString(this.port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c",
				"fsync=off", "-c", "full_page_writes=off", "-c", "shared_buffers=16MB", "-c", "max_connections=200")),
				"postgres.log");
		awaitReady("PostgreSQL on port " + this.port);
	}

	@Override
	public void stop(boolean crash) throws Exception {
		// QUIT is the immediate shutdown: every process exits at once and the next start
		// recovers, as after a crash, without leaving backends that hold the shared
		// memory.
		signal(crash ? "QUIT" : "INT");
		awaitExit();
	}

	@Override
	public boolean answers() {
		try (Connection connection = DriverManager.getConnection(url("postgres") + "?connectTimeout=1&socketTimeout=1",
				"postgres", "")) {
			return connection.isValid(1);
		}
		catch (SQLException ex) {
			return false;
		}
	}

	@Override
	public String jdbcUrl() {
		return url(DATABASE) + "?connectTimeout=1&socketTimeout=6";
	}

	@Override
	public String jdbcUser() {
		return "postgres";
	}

	private String url(String database) {
		return "jdbc:postgresql://127.0.0.1:" + this.port + "/" + database;
	}

	private Path data() {
		return this.directory.resolve("data").toAbsolutePath();
	}

	private List<String> asUser(List<String> command) {
		if (!this.asRoot) {
			return command;
		}
		List<String> wrapped = new ArrayList<>(
				List.of(require("setpriv", "util-linux", "/usr/bin/setpriv", "/bin/setpriv"), "--reuid=postgres",
						"--regid=postgres", "--init-groups"));
		wrapped.addAll(command);
		return wrapped;
	}

	private static Path binaries() throws IOException {
		Path root = Path.of("/usr/lib/postgresql");
		if (Files.isDirectory(root)) {
			try (Stream<Path> versions = Files.list(root)) {
				Path newest = versions.filter((version) -> Files.isExecutable(version.resolve("bin/postgres")))
					.max(Comparator.comparingInt(PostgresServer::major))
					.orElse(null);
				if (newest != null) {
					return newest.resolve("bin");
				}
			}
		}
		return Path.of(require("the PostgreSQL server", "postgresql", "/usr/lib/postgresql/15/bin/postgres"))
			.getParent();
	}

	private static int major(Path version) {
		try {
			return Integer.parseInt(version.getFileName().toString());
		}
		catch (NumberFormatException ex) {
			return 0;
		}
	}

}
