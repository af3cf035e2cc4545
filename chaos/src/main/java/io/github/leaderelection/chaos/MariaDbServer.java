package io.github.leaderelection.chaos;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * A MariaDB server of the harness's own ({@code mariadbd}, as root, without grant
 * tables).
 *
 * <p>
 * InnoDB writes its log to the operating system at every commit
 * ({@code innodb_flush_log_at_trx_commit=2}): what a transaction committed survives a
 * crash of the server process, which is the crash the harness injects, though not one of
 * the machine.
 */
final class MariaDbServer extends StoreServer {

	private final String mariadbd;

	MariaDbServer(Path directory) throws Exception {
		super(directory);
		this.mariadbd = require("the MariaDB server", "mariadb-server", "/usr/sbin/mariadbd", "/usr/bin/mariadbd");
	}

	@Override
	void start() throws Exception {
		String installDb = require("mariadb-install-db", "mariadb-server", "/usr/bin/mariadb-install-db",
				"/usr/bin/mysql_install_db");
		run(List.of(installDb, "--no-defaults", "--datadir=" + data(), "--user=root",
				"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve"),
				this.directory.resolve("install.log"));
		restart();
		try (Connection connection = DriverManager.getConnection(url(""), "root", "");
				Statement statement = connection.createStatement()) {
			statement.execute("CREATE DATABASE IF NOT EXISTS chaos");
		}
	}

	@Override
	void restart() throws Exception {
		launch(List.of(this.mariadbd, "--no-defaults", "--datadir=" + data(), "--port=" + this.port,
				"--bind-address=127.0.0.1", "--socket=" + this.directory.resolve("mariadb.sock"),
				"--pid-file=" + this.directory.resolve("mariadb.pid"), "--user=root", "--skip-grant-tables",
				"--skip-name-resolve", "--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M",
				"--innodb-flush-log-at-trx-commit=2", "--skip-log-bin", "--performance-schema=OFF",
				"--max-connections=200", "--log-error=" + this.directory.resolve("mariadb.err")), "mariadb.out");
		awaitReady("MariaDB on port " + this.port);
	}

	@Override
	void stop(boolean crash) throws Exception {
		signal(crash ? "KILL" : "TERM");
		awaitExit();
	}

	@Override
	boolean answers() {
		try (Connection connection = DriverManager.getConnection(url("") + "?connectTimeout=500&socketTimeout=1000",
				"root", "")) {
			return connection.isValid(1);
		}
		catch (SQLException ex) {
			return false;
		}
	}

	@Override
	String fenceUrl() {
		return url("chaos") + "?connectTimeout=1000&socketTimeout=6000";
	}

	@Override
	String fenceUser() {
		return "root";
	}

	private String url(String database) {
		return "jdbc:mariadb://127.0.0.1:" + this.port + "/" + database;
	}

	private Path data() {
		return this.directory.resolve("data").toAbsolutePath();
	}

}
