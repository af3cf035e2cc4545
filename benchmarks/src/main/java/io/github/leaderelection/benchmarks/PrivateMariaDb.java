package io.github.leaderelection.benchmarks;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A MariaDB server of the harness's own (the machine's {@code mariadbd}, default settings
 * but a small buffer pool, its data under {@code target/}), for figures 2 to 4: its
 * status counters then count the benchmark's statements only, whatever other clients do
 * to the shared server meanwhile.
 */
final class PrivateMariaDb implements AutoCloseable {

	private final Path directory;

	private final Process process;

	final int port;

	private PrivateMariaDb(Path directory, Process process, int port) {
		this.directory = directory;
		this.process = process;
		this.port = port;
	}

	static PrivateMariaDb start(Path directory) throws Exception {
		String mariadbd = firstExisting("/usr/sbin/mariadbd", "/usr/bin/mariadbd");
		String installDb = firstExisting("/usr/bin/mariadb-install-db", "/usr/bin/mysql_install_db");
		deleteRecursively(directory);
		Files.createDirectories(directory);
		Path data = directory.resolve("data");
		run(List.of(installDb, "--no-defaults", "--datadir=" + data, "--user=root",
				"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve"),
				directory.resolve("install.log"));
		int port;
		try (ServerSocket socket = new ServerSocket(0)) {
			port = socket.getLocalPort();
		}
		Process process = new ProcessBuilder(mariadbd, "--no-defaults", "--datadir=" + data, "--port=" + port,
				"--bind-address=127.0.0.1", "--socket=" + directory.resolve("mariadb.sock"),
				"--pid-file=" + directory.resolve("mariadb.pid"), "--user=root", "--skip-grant-tables",
				"--skip-name-resolve", "--innodb-buffer-pool-size=64M", "--skip-log-bin", "--max-connections=300",
				"--log-error=" + directory.resolve("mariadb.err"))
			.redirectErrorStream(true)
			.redirectOutput(directory.resolve("mariadb.out").toFile())
			.start();
		PrivateMariaDb server = new PrivateMariaDb(directory, process, port);
		// Not left running if the harness is interrupted.
		Runtime.getRuntime().addShutdownHook(new Thread(process::destroy));
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
		while (true) {
			try (Connection connection = DriverManager.getConnection(server.url("") + "?connectTimeout=500", "root",
					""); Statement statement = connection.createStatement()) {
				statement.execute("CREATE DATABASE IF NOT EXISTS test");
				return server;
			}
			catch (SQLException ex) {
				if (!process.isAlive() || System.nanoTime() > deadline) {
					server.close();
					throw new IllegalStateException("The private MariaDB did not start; see " + directory, ex);
				}
				Thread.sleep(200);
			}
		}
	}

	String url(String database) {
		return "jdbc:mariadb://127.0.0.1:" + this.port + "/" + database;
	}

	@Override
	public void close() throws Exception {
		this.process.destroy();
		if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
			this.process.destroyForcibly();
			this.process.waitFor(10, TimeUnit.SECONDS);
		}
		deleteRecursively(this.directory.resolve("data"));
	}

	private static String firstExisting(String... candidates) {
		for (String candidate : candidates) {
			if (Files.isExecutable(Path.of(candidate))) {
				return candidate;
			}
		}
		throw new IllegalStateException("None of " + List.of(candidates) + " exists: install the Debian package "
				+ "mariadb-server, or pass -Dbench.mariadb.url=jdbc:mariadb://... to use a running server");
	}

	private static void run(List<String> command, Path log) throws Exception {
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0) {
			process.destroyForcibly();
			throw new IllegalStateException(command.get(0) + " failed; see " + log);
		}
	}

	private static void deleteRecursively(Path path) throws IOException {
		if (!Files.exists(path)) {
			return;
		}
		try (var files = Files.walk(path)) {
			for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
				Files.deleteIfExists(file);
			}
		}
	}

}
