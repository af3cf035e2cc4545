package io.github.leaderelection.autoconfigure;

import java.util.Locale;

/**
 * The stores an election can run through, as named by {@code leader-election.backend}.
 */
public enum LeaderElectionBackend {

	/** A table in the application's database, through its {@code DataSource}. */
	JDBC(true),

	/** Redis, through the application's {@code RedisConnectionFactory} (Lettuce). */
	REDIS(true),

	/**
	 * ZooKeeper, through Apache Curator: the application's {@code CuratorFramework}, or
	 * one built from {@code leader-election.zookeeper.connect-string}.
	 */
	ZOOKEEPER(true),

	/**
	 * etcd v3, through jetcd: the application's {@code Client}, or one built from
	 * {@code leader-election.etcd.endpoints}.
	 */
	ETCD(true),

	/** This JVM's memory: one process only, for tests and local runs. */
	IN_MEMORY(true);

	private final boolean available;

	LeaderElectionBackend(boolean available) {
		this.available = available;
	}

	/** Whether this version of the library provides the backend. */
	public boolean isAvailable() {
		return this.available;
	}

	/** The backend as written in the property, such as {@code in-memory}. */
	public String propertyValue() {
		return name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

}
