package io.github.leaderelection.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

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

	/**
	 * The {@link #SMALL} settings for one server of a replicated pair, with a binary log
	 * that holds what it replicated too ({@code log-slave-updates}), global transaction
	 * ids, and semi-synchronous replication on both sides: a commit on the primary
	 * returns once the replica has written it to its relay log ({@code AFTER_SYNC}), and
	 * a primary without a replica commits at once ({@code wait-no-slave} off) instead of
	 * waiting its timeout. The timeout, after which a primary whose replica does not
	 * answer would go on without it, is an hour: longer than any run, so that it never
	 * does in one.
	 * @param serverId the server's id, unique in the pair
	 * @return the settings
	 */
	public static List<String> replicated(int serverId) {
		return List.of("--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M",
				"--innodb-flush-log-at-trx-commit=2", "--performance-schema=OFF", "--max-connections=200",
				"--server-id=" + serverId, "--log-bin=mariadb-bin", "--log-slave-updates", "--binlog-format=ROW",
				"--rpl-semi-sync-master-enabled=ON", "--rpl-semi-sync-slave-enabled=ON",
				"--rpl-semi-sync-master-wait-point=AFTER_SYNC", "--rpl-semi-sync-master-wait-no-slave=OFF",
				"--rpl-semi-sync-master-timeout=3600000", "--skip-slave-start");
	}

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
		install();
		restart();
		try (Connection connection = DriverManager.getConnection(url(""), "root", "");
				Statement statement = connection.createStatement()) {
			statement.execute("CREATE DATABASE IF NOT EXISTS " + DATABASE);
		}
	}

	private void install() throws Exception {
		Path data = data();
		if (Files.exists(data)) {
			try (Stream<Path> files = Files.walk(data)) {
				for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
					Files.deleteIfExists(file);
				}
			}
		}
		String installDb = require("mariadb-install-db", "mariadb-server", "/usr/bin/mariadb-install-db",
				"/usr/bin/mysql_install_db");
		run(List.of(installDb, "--no-defaults", "--datadir=" + data, "--user=root",
				"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve"),
				this.directory.resolve("install.log"));
	}

	/**
	 * Starts this server from nothing as a replica of the given one (both with
	 * {@link #replicated} settings), as a base backup would: the primary's database is
	 * copied with {@code mariadb-dump}, which notes the transaction it was taken at, and
	 * the replica streams from there; returns once it does.
	 * @param primary the server to replicate
	 */
	public void startReplicaOf(MariaDbServer primary) throws Exception {
		install();
		restart();
		Path dump = this.directory.resolve("base.sql");
		Path log = this.directory.resolve("base.log");
		String mariadbDump = require("mariadb-dump", "mariadb-client", "/usr/bin/mariadb-dump", "/usr/bin/mysqldump");
		String mariadb = require("the mariadb client", "mariadb-client", "/usr/bin/mariadb", "/usr/bin/mysql");
		Process dumping = new ProcessBuilder(mariadbDump, "--no-defaults", "-h", "127.0.0.1", "-P",
				Integer.toString(primary.port), "-u", "root", "--single-transaction", "--gtid", "--master-data=1",
				"--databases", DATABASE)
			.redirectOutput(dump.toFile())
			.redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
			.start();
		requireSuccess(dumping, "mariadb-dump of port " + primary.port, log);
		try (Connection connection = DriverManager.getConnection(url(""), "root", "");
				Statement statement = connection.createStatement()) {
			statement.execute("CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = " + primary.port
					+ ", MASTER_USER = 'root', MASTER_PASSWORD = '', MASTER_CONNECT_RETRY = 1");
		}
		// Not written to this server's own binary log: the transactions are the
		// primary's, and the dump sets where replication resumes (gtid_slave_pos).
		Process loading = new ProcessBuilder(mariadb, "--no-defaults", "-h", "127.0.0.1", "-P",
				Integer.toString(this.port), "-u", "root", "--init-command=SET sql_log_bin = 0")
			.redirectInput(dump.toFile())
			.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
			.redirectErrorStream(true)
			.start();
		requireSuccess(loading, "loading the dump into port " + this.port, log);
		try (Connection connection = DriverManager.getConnection(url(""), "root", "");
				Statement statement = connection.createStatement()) {
			statement.execute("START SLAVE");
			long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
			while (!"Yes".equals(replicaStatus(statement, "Slave_IO_Running"))
					|| !"Yes".equals(replicaStatus(statement, "Slave_SQL_Running"))) {
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("MariaDB on port " + this.port + " does not replicate port "
							+ primary.port + ": " + replicaStatus(statement, "Last_Error") + "; see " + this.directory);
				}
				Thread.sleep(50);
			}
		}
	}

	/**
	 * Makes this replica a primary, as a failover manager would: it stops fetching from
	 * the dead primary, applies every transaction it received (each one the primary
	 * committed, with semi-synchronous replication), and forgets the primary.
	 */
	public void promote() throws Exception {
		try (Connection connection = DriverManager.getConnection(url(""), "root", "");
				Statement statement = connection.createStatement()) {
			statement.execute("STOP SLAVE IO_THREAD");
			if (!replicates(statement)) {
				throw new IllegalStateException("MariaDB on port " + this.port + " is not a replica");
			}
			String received = replicaStatus(statement, "Gtid_IO_Pos");
			try (ResultSet waited = statement
				.executeQuery("SELECT MASTER_GTID_WAIT('" + received.replace("'", "") + "', 60)")) {
				if (!waited.next() || waited.getInt(1) != 0 || waited.wasNull()) {
					throw new IllegalStateException("MariaDB on port " + this.port + " did not apply what it received ("
							+ received + ") within 60 s");
				}
			}
			statement.execute("STOP SLAVE");
			statement.execute("RESET SLAVE ALL");
		}
	}

	/**
	 * Waits until a replica acknowledges this primary's commits, and returns how many
	 * commits so far went without acknowledgement: {@link #commitsWithoutReplica} must
	 * still say as many when the primary fails.
	 */
	public long awaitSemiSynchronousReplica(Duration timeout) throws Exception {
		long deadline = System.nanoTime() + timeout.toNanos();
		try (Connection connection = DriverManager.getConnection(url(""), "root", "");
				Statement statement = connection.createStatement()) {
			while (!"ON".equals(status(statement, "Rpl_semi_sync_master_status"))
					|| Long.parseLong(status(statement, "Rpl_semi_sync_master_clients")) < 1) {
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("No replica acknowledges the commits of MariaDB on port "
							+ this.port + " within " + timeout);
				}
				Thread.sleep(50);
			}
			return Long.parseLong(status(statement, "Rpl_semi_sync_master_no_tx"));
		}
	}

	/** How many commits of this primary went without a replica's acknowledgement. */
	public long commitsWithoutReplica() throws SQLException {
		try (Connection connection = DriverManager.getConnection(url(""), "root", "");
				Statement statement = connection.createStatement()) {
			return Long.parseLong(status(statement, "Rpl_semi_sync_master_no_tx"));
		}
	}

	private static String status(Statement statement, String name) throws SQLException {
		try (ResultSet result = statement.executeQuery("SHOW GLOBAL STATUS LIKE '" + name + "'")) {
			if (!result.next()) {
				throw new IllegalStateException("MariaDB reports no status " + name);
			}
			return result.getString(2);
		}
	}

	private static boolean replicates(Statement statement) throws SQLException {
		try (ResultSet result = statement.executeQuery("SHOW SLAVE STATUS")) {
			return result.next();
		}
	}

	private static String replicaStatus(Statement statement, String column) throws SQLException {
		try (ResultSet result = statement.executeQuery("SHOW SLAVE STATUS")) {
			return result.next() ? String.valueOf(result.getString(column)) : "";
		}
	}

	private static void requireSuccess(Process process, String what, Path log) throws InterruptedException {
		if (!process.waitFor(120, TimeUnit.SECONDS)) {
			process.destroyForcibly();
			throw new IllegalStateException("Timed out: " + what);
		}
		if (process.exitValue() != 0) {
			throw new IllegalStateException(what + " failed with exit code " + process.exitValue() + "; see " + log);
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
