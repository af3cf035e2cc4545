package io.github.leaderelection.benchmarks;

import java.util.Locale;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/**
 * The stores the benchmarks elect through, and how to reach each: from system properties,
 * so that the coordinator hands the same addresses to every node JVM it starts.
 */
enum Store {

	MARIADB("MariaDB"), POSTGRESQL("PostgreSQL"), H2("H2"), REDIS("Redis"), ZOOKEEPER("ZooKeeper"), ETCD("etcd");

	/**
	 * Our lease table; not the seed's default name, which the seed SQL uses under its own
	 * prefix.
	 */
	static final String OURS_TABLE = "bench_leader_election";

	/** The table of live candidates that balancing keeps next to our lease table. */
	static final String OURS_CANDIDATES_TABLE = OURS_TABLE + "_candidates";

	/** Spring Integration's table prefix: its lock table is {@code BENCH_INT_LOCK}. */
	static final String SI_PREFIX = "BENCH_INT_";

	static final String SEED_TABLE = "bench_seed_leader_election";

	static final String SHEDLOCK_TABLE = "bench_shedlock";

	/** Every Redis key the benchmarks write starts with one of these. */
	static final String REDIS_OURS_PREFIX = "bench-le:";

	static final String REDIS_SI_REGISTRY = "bench-si-lock";

	static final String ZK_OURS_BASE = "/bench-leader-election";

	static final String ZK_SI_NAMESPACE = "/bench-si-leader/";

	static final String ETCD_OURS_NAMESPACE = "bench-leader-election";

	/**
	 * The private PostgreSQL database, so that its statistics count only the benchmark.
	 */
	static final String PG_DATABASE = "leader_bench";

	final String label;

	Store(String label) {
		this.label = label;
	}

	static Store parse(String name) {
		return valueOf(name.toUpperCase(Locale.ROOT));
	}

	String id() {
		return name().toLowerCase(Locale.ROOT);
	}

	boolean isJdbc() {
		return this == MARIADB || this == POSTGRESQL || this == H2;
	}

	static String prop(String name, String fallback) {
		String value = System.getProperty(name);
		if (value == null) {
			value = System.getenv(name.toUpperCase(Locale.ROOT).replace('.', '_'));
		}
		return (value != null) ? value : fallback;
	}

	static String mariadbUrl() {
		return prop("bench.mariadb.url", "jdbc:mariadb://127.0.0.1:3306/test");
	}

	/** The shared MariaDB that ShedLock is measured on (figure 1). */
	static String sharedMariadbUrl() {
		return prop("bench.shedlock.mariadb.url", "jdbc:mariadb://127.0.0.1:3306/test");
	}

	static String mariadbUser() {
		return prop("bench.mariadb.user", "root");
	}

	static String mariadbPassword() {
		return prop("bench.mariadb.password", "");
	}

	static String postgresAdminUrl() {
		return prop("bench.postgres.url", "jdbc:postgresql://127.0.0.1:5432/postgres");
	}

	static String postgresUrl() {
		return postgresAdminUrl().replaceFirst("/[^/?]*(\\?|$)", "/" + PG_DATABASE + "$1");
	}

	static String postgresUser() {
		return prop("bench.postgres.user", "postgres");
	}

	static String postgresPassword() {
		return prop("bench.postgres.password", "");
	}

	/** Set by the coordinator once its H2 TCP server listens. */
	static String h2Url() {
		return prop("bench.h2.url", "jdbc:h2:mem:bench;DB_CLOSE_DELAY=-1");
	}

	static String redisHost() {
		return prop("bench.redis.host", "127.0.0.1");
	}

	static int redisPort() {
		return Integer.parseInt(prop("bench.redis.port", "6379"));
	}

	/** Set by the coordinator once its ZooKeeper server listens. */
	static String zookeeperConnect() {
		return prop("bench.zookeeper.connect", "127.0.0.1:2181");
	}

	/** Set by the coordinator once its etcd member listens. */
	static String etcdEndpoint() {
		return prop("bench.etcd.endpoint", "http://127.0.0.1:2379");
	}

	/** A pool on the shared MariaDB, for ShedLock. */
	static DataSource sharedMariadb(int maxPool) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(sharedMariadbUrl());
		config.setUsername(mariadbUser());
		config.setPassword(mariadbPassword());
		config.setMaximumPoolSize(maxPool);
		config.setPoolName("bench-shared-mariadb");
		return new HikariDataSource(config);
	}

	/** A small pool per candidate, as an application would have. */
	DataSource dataSource(int maxPool) {
		HikariConfig config = new HikariConfig();
		switch (this) {
			case MARIADB -> {
				config.setJdbcUrl(mariadbUrl());
				config.setUsername(mariadbUser());
				config.setPassword(mariadbPassword());
			}
			case POSTGRESQL -> {
				config.setJdbcUrl(postgresUrl());
				config.setUsername(postgresUser());
				config.setPassword(postgresPassword());
			}
			case H2 -> {
				config.setJdbcUrl(h2Url());
				config.setUsername("sa");
				config.setPassword("");
			}
			default -> throw new IllegalStateException(this + " is not a database");
		}
		config.setMaximumPoolSize(maxPool);
		config.setMinimumIdle(1);
		config.setPoolName("bench-" + id());
		return new HikariDataSource(config);
	}

}
