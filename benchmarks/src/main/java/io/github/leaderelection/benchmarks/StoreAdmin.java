package io.github.leaderelection.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * What the coordinator does to the stores: prepares and empties the benchmark's tables
 * and keys, removes them all at the end, and reads the servers' own request counters.
 *
 * <p>
 * On the shared servers it touches only its own names: tables {@code bench_*} and
 * {@code BENCH_INT_LOCK} in MariaDB's {@code test} database, a database
 * {@code leader_bench} of its own in PostgreSQL, Redis keys starting with
 * {@code bench-le:} or {@code bench-si-lock}. Never {@code FLUSHALL}.
 */
final class StoreAdmin {

	private static final String SI_LOCK_TABLE = Store.SI_PREFIX + "LOCK";

	private StoreAdmin() {
	}

	// Setup and cleanup

	static void setUpPostgres() throws SQLException {
		try (Connection admin = postgresAdmin(); Statement statement = admin.createStatement()) {
			statement.execute("DROP DATABASE IF EXISTS " + Store.PG_DATABASE + " WITH (FORCE)");
			statement.execute("CREATE DATABASE " + Store.PG_DATABASE);
		}
	}

	/**
	 * Creates Spring Integration's lock table (its schema-*.sql, with the benchmark's
	 * prefix).
	 */
	static void createSpringIntegrationTable(Store store) throws SQLException {
		String timestamp = (store == Store.MARIADB) ? "DATETIME(6)" : "TIMESTAMP";
		String engine = (store == Store.MARIADB) ? " ENGINE=InnoDB" : "";
		try (Connection connection = connect(store); Statement statement = connection.createStatement()) {
			statement.execute("CREATE TABLE IF NOT EXISTS " + SI_LOCK_TABLE + " (LOCK_KEY CHAR(36) NOT NULL, "
					+ "REGION VARCHAR(100) NOT NULL, CLIENT_ID CHAR(36), CREATED_DATE " + timestamp + " NOT NULL, "
					+ "EXPIRED_AFTER " + timestamp + " NOT NULL, constraint " + SI_LOCK_TABLE
					+ "_PK primary key (LOCK_KEY, REGION))" + engine);
		}
	}

	/**
	 * Empties the contender's rows or keys, so that each measurement starts from nothing.
	 */
	static void reset(Contender contender) throws Exception {
		Store store = contender.store();
		if (store.isJdbc()) {
			if (contender.kind() == Contender.Kind.SPRING_INTEGRATION) {
				createSpringIntegrationTable(store);
			}
			try (Connection connection = connect(store); Statement statement = connection.createStatement()) {
				for (String table : List.of(Store.OURS_TABLE, Store.OURS_CANDIDATES_TABLE, SI_LOCK_TABLE,
						Store.SEED_TABLE)) {
					try {
						statement.execute("DELETE FROM " + table);
					}
					catch (SQLException ex) {
						// not created yet
					}
				}
			}
		}
		else if (store == Store.REDIS) {
			deleteRedisKeys();
		}
	}

	/** Removes everything the benchmarks created on the shared servers. */
	static void cleanUp() {
		try (Connection connection = DriverManager.getConnection(Store.sharedMariadbUrl(), Store.mariadbUser(),
				Store.mariadbPassword()); Statement statement = connection.createStatement()) {
			statement.execute("DROP TABLE IF EXISTS " + Store.SHEDLOCK_TABLE);
		}
		catch (SQLException ex) {
			System.err.println("Could not drop the ShedLock table on the shared MariaDB: " + ex);
		}
		try (Connection connection = connect(Store.MARIADB); Statement statement = connection.createStatement()) {
			for (String table : List.of(Store.OURS_TABLE, Store.OURS_CANDIDATES_TABLE, Store.OURS_TABLE + "_runs",
					SI_LOCK_TABLE, Store.SEED_TABLE, Store.SHEDLOCK_TABLE)) {
				statement.execute("DROP TABLE IF EXISTS " + table);
			}
		}
		catch (SQLException ex) {
			System.err.println("Could not drop the MariaDB tables: " + ex);
		}
		try (Connection admin = postgresAdmin(); Statement statement = admin.createStatement()) {
			statement.execute("DROP DATABASE IF EXISTS " + Store.PG_DATABASE + " WITH (FORCE)");
		}
		catch (SQLException ex) {
			System.err.println("Could not drop the PostgreSQL database: " + ex);
		}
		try {
			deleteRedisKeys();
		}
		catch (RuntimeException ex) {
			System.err.println("Could not delete the Redis keys: " + ex);
		}
	}

	static long deleteRedisKeys() {
		RedisClient client = RedisClient.create("redis://" + Store.redisHost() + ":" + Store.redisPort());
		long deleted = 0;
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			RedisCommands<String, String> redis = connection.sync();
			for (String pattern : List.of(Store.REDIS_OURS_PREFIX + "*", Store.REDIS_SI_REGISTRY + "*")) {
				ScanCursor cursor = ScanCursor.INITIAL;
				do {
					KeyScanCursor<String> page = redis.scan(cursor, ScanArgs.Builder.matches(pattern).limit(1000));
					if (!page.getKeys().isEmpty()) {
						deleted += redis.del(page.getKeys().toArray(new String[0]));
					}
					cursor = page;
				}
				while (!cursor.isFinished());
			}
		}
		finally {
			client.shutdown();
		}
		return deleted;
	}

	static Connection connect(Store store) throws SQLException {
		return switch (store) {
			case MARIADB ->
				DriverManager.getConnection(Store.mariadbUrl(), Store.mariadbUser(), Store.mariadbPassword());
			case POSTGRESQL ->
				DriverManager.getConnection(Store.postgresUrl(), Store.postgresUser(), Store.postgresPassword());
			case H2 -> DriverManager.getConnection(Store.h2Url(), "sa", "");
			default -> throw new IllegalArgumentException(store + " is not a database");
		};
	}

	private static Connection postgresAdmin() throws SQLException {
		return DriverManager.getConnection(Store.postgresAdminUrl(), Store.postgresUser(), Store.postgresPassword());
	}

	// Counters, as the servers count them

	/**
	 * Samples the server's counters: the map's first entry is the request count used in
	 * the tables, the others are kept for the JSON.
	 */
	static Map<String, Long> sample(Store store) throws Exception {
		return switch (store) {
			case MARIADB -> mariadb();
			case POSTGRESQL -> postgres();
			case REDIS -> redis();
			case ZOOKEEPER -> zookeeper();
			case ETCD -> etcd();
			case H2 -> Map.of("requests", 0L);
		};
	}

	/** What the first counter of {@link #sample} counts. */
	static String requestCounter(Store store) {
		return switch (store) {
			case MARIADB -> "Questions (statements from clients)";
			case POSTGRESQL -> "pg_stat_database xact_commit + xact_rollback of its own database";
			case REDIS -> "INFO commandstats calls, all commands but INFO";
			case ZOOKEEPER -> "mntr zk_packets_received (requests and pings)";
			case ETCD -> "/metrics grpc_server_handled_total, every unary call and stream message handled";
			case H2 -> "not counted";
		};
	}

	private static Map<String, Long> mariadb() throws SQLException {
		Map<String, Long> values = new LinkedHashMap<>();
		values.put("requests", 0L);
		try (Connection connection = connect(Store.MARIADB);
				Statement statement = connection.createStatement();
				ResultSet rows = statement.executeQuery(
						"SHOW GLOBAL STATUS WHERE Variable_name = 'Questions' " + "OR Variable_name LIKE 'Com\\_%'")) {
			while (rows.next()) {
				long value = rows.getLong(2);
				if (value != 0) {
					values.put(rows.getString(1), value);
				}
			}
		}
		values.put("requests", values.getOrDefault("Questions", 0L));
		return values;
	}

	private static Map<String, Long> postgres() throws SQLException {
		Map<String, Long> values = new LinkedHashMap<>();
		try (Connection admin = postgresAdmin(); Statement statement = admin.createStatement()) {
			statement.execute("SELECT pg_stat_clear_snapshot()");
			try (ResultSet rows = statement
				.executeQuery("SELECT xact_commit, xact_rollback, tup_returned, tup_fetched, "
						+ "tup_inserted, tup_updated, tup_deleted FROM pg_stat_database WHERE datname = '"
						+ Store.PG_DATABASE + "'")) {
				if (rows.next()) {
					values.put("requests", rows.getLong(1) + rows.getLong(2));
					values.put("xact_commit", rows.getLong(1));
					values.put("xact_rollback", rows.getLong(2));
					values.put("tup_returned", rows.getLong(3));
					values.put("tup_fetched", rows.getLong(4));
					values.put("tup_inserted", rows.getLong(5));
					values.put("tup_updated", rows.getLong(6));
					values.put("tup_deleted", rows.getLong(7));
				}
			}
		}
		return values;
	}

	private static Map<String, Long> redis() {
		RedisClient client = RedisClient.create("redis://" + Store.redisHost() + ":" + Store.redisPort());
		Map<String, Long> values = new LinkedHashMap<>();
		values.put("requests", 0L);
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			String info = connection.sync().info("commandstats");
			long total = 0;
			for (String line : info.split("\r?\n")) {
				// cmdstat_evalsha:calls=12,usec=...
				if (line.startsWith("cmdstat_")) {
					String command = line.substring(8, line.indexOf(':'));
					int start = line.indexOf("calls=") + 6;
					long calls = Long.parseLong(line.substring(start, line.indexOf(',', start)));
					values.put(command, calls);
					if (!command.equals("info") && !command.equals("hello") && !command.equals("client|setinfo")) {
						total += calls;
					}
				}
			}
			values.put("requests", total);
		}
		finally {
			client.shutdown();
		}
		return values;
	}

	/**
	 * etcd's own counters (its {@code /metrics} endpoint): gRPC calls handled per method,
	 * and keep-alive stream messages received, which a lease keep-alive is.
	 */
	private static Map<String, Long> etcd() throws IOException {
		Map<String, Long> values = new LinkedHashMap<>();
		values.put("requests", 0L);
		HttpURLConnection connection = (HttpURLConnection) URI.create(Store.etcdEndpoint() + "/metrics")
			.toURL()
			.openConnection();
		long requests = 0;
		try (BufferedReader in = new BufferedReader(
				new InputStreamReader(connection.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = in.readLine()) != null) {
				boolean handled = line.startsWith("grpc_server_handled_total{");
				boolean streamed = line.startsWith("grpc_server_msg_received_total{")
						&& line.contains("grpc_type=\"bidi_stream\"");
				if (handled || streamed) {
					String method = line.replaceAll(".*grpc_method=\"([^\"]*)\".*", "$1");
					long value = (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
					values.merge((handled ? "handled " : "streamed ") + method, value, Long::sum);
					if (handled && !line.contains("grpc_type=\"bidi_stream\"")) {
						requests += value;
					}
					if (streamed) {
						requests += value;
					}
				}
			}
		}
		finally {
			connection.disconnect();
		}
		values.put("requests", requests);
		return values;
	}

	private static Map<String, Long> zookeeper() throws IOException {
		Map<String, Long> values = new LinkedHashMap<>();
		values.put("requests", 0L);
		String[] hostPort = Store.zookeeperConnect().split(":");
		try (Socket socket = new Socket(hostPort[0], Integer.parseInt(hostPort[1]))) {
			OutputStream out = socket.getOutputStream();
			out.write("mntr".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			BufferedReader in = new BufferedReader(
					new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
			String line;
			while ((line = in.readLine()) != null) {
				String[] parts = line.split("\t");
				if (parts.length == 2 && parts[1].matches("-?\\d+")) {
					values.put(parts[0], Long.parseLong(parts[1]));
				}
			}
		}
		values.put("requests", values.getOrDefault("zk_packets_received", 0L));
		return values;
	}

}
