package io.github.leaderelection.testing;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * A MariaDB server of a test's own ({@code mariadbd}, as root, without grant tables).
 *
 * <p>
 * With the {@link #SMALL} settings InnoDB writes its log to the operating system at every
 * commit ({@code innodb_flush_log_at_trx_commit=2}): what a transaction committed
 * survives a crash of the server process, which is the crash the chaos harness injects,
 * though not one of the machine.
 */
public final class MariaDbServer extends StoreServer {

	/**
	 * Small and quick, for a crash-and-restart harness: a small buffer pool and log, the
	 * log written to the operating system (not synced) at every commit, no binary log, no
	 * performance schema.
	 */
	public static final List<String> SMALL = List.of("--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M",
			"--innodb-flush-log-at-trx-commit=2", "--skip-log-bin", "--performance-schema=OFF",
			"--max-connections=200");

	private final String mariadbd;

	private final List<String> tuning;

	/**
	 * A server with the {@link #SMALL} settings.
	 * @param directory where its files go
	 * @throws Exception if MariaDB is not installed
	 */
	public MariaDbServer(Path directory) throws Exception {
		this(directory, SMALL);
	}

	/**
	 * A server with settings of the caller's own.
	 * @param directory where its files go
	 * @param tuning server options, such as {@code --innodb-buffer-pool-size=64M}
	 * @throws Exception if MariaDB is not installed
	 */
	public MariaDbServer(Path directory, List<String> tuning) throws Exception {
		super(directory);
		this.mariadbd = require("the MariaDB server", "mariadb-server", "/usr/sbin/mariadbd", "/usr/bin/mariadbd");
		this.tuning = List.copyOf(tuning);
	}

	@Override
	public void start() throws Exception {
		String installDb = require("mariadb-install-db", "mariadb-server", "/usr/bin/mariadb-install-db",
				"/usr/bin/mysql_install_db");
		run(List.of(installDb, "--no-defaults", "--datadir=" + data(), "--user=root",
				"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve"),
				this.directory.resolve("install.log"));
		restart();
		try (Connection connection = DriverManager.getConnection(url(""), "root", "");
				Statement statement = connection.createStatement()) {
			statement.execute("CREATE DATABASE IF NOT EXISTS " + DATABASE);
		}
	}

	@Override
	public void restart() throws Exception {
		List<String> command = new ArrayList<>(List.of(this.mariadbd, "--no-defaults", "--datadir=" + data(),
				"--port=" + this.port, "--bind-address=127.0.0.1", "--socket=" + this.directory.resolve("mariadb.sock"),
				"--pid-file=" + this.directory.resolve("mariadb.pid"), "--user=root", "--skip-grant-tables",
				"--skip-name-resolve", "--log-error=" + this.directory.resolve("mariadb.err")));
		command.addAll(this.tuning);
		launch(command, "mariadb.out");
		awaitReady("MariaDB on port " + this.port);
	}

	@Override
	public boolean answers() {
		try (Connection connection = DriverManager.getConnection(url("") + "?connectTimeout=500&socketTimeout=1000",
				"root", "")) {
			return connection.isValid(1);
		}
		catch (SQLException ex) {
			return false;
		}
	}

	@Override
	public String jdbcUrl() {
		return url(DATABASE) + "?connectTimeout=1000&socketTimeout=6000";
	}

	@Override
	public String jdbcUser() {
		return "root";
	}

	/**
	 * The JDBC URL of a database on this server, without options.
	 * @param database the database, empty for none
	 * @return the URL
	 */
	public String url(String database) {
		return "jdbc:mariadb://127.0.0.1:" + this.port + "/" + database;
	}

	private Path data() {
		return this.directory.resolve("data").toAbsolutePath();
	}

}
