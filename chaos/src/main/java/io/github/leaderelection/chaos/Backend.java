package io.github.leaderelection.chaos;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The stores the harness can run an election on.
 */
enum Backend {

	JDBC_MARIADB("jdbc-mariadb"),

	JDBC_POSTGRES("jdbc-postgres"),

	/**
	 * PostgreSQL as a primary and a synchronous streaming replica: the nodes name both
	 * servers and use the primary, and the {@code failover-store} fault kills the primary
	 * and promotes the replica.
	 */
	JDBC_POSTGRES_REPLICA("jdbc-postgres-replica"),

	/**
	 * MariaDB as a primary and a semi-synchronous replica: each node reaches the primary
	 * through its own proxy, which the {@code failover-store} fault points at the
	 * promoted replica, as a virtual IP or a database proxy would.
	 */
	JDBC_MARIADB_REPLICA("jdbc-mariadb-replica"),

	REDIS("redis"),

	/**
	 * Redis with a replica and a Sentinel: the nodes ask the Sentinel for the master, and
	 * the {@code failover-store} fault kills the master so that the Sentinel promotes the
	 * replica.
	 */
	REDIS_SENTINEL("redis-sentinel"),

	ZOOKEEPER("zookeeper"),

	ETCD("etcd");

	private final String id;

	Backend(String id) {
		this.id = id;
	}

	String id() {
		return this.id;
	}

	/**
	 * Whether the store is a single database server, which also holds the fenced table.
	 */
	boolean isJdbc() {
		return this == JDBC_MARIADB || this == JDBC_POSTGRES;
	}

	/**
	 * Whether the nodes elect through the JDBC store, on one server or a replicated pair.
	 */
	boolean usesJdbcStore() {
		return isJdbc() || this == JDBC_POSTGRES_REPLICA || this == JDBC_MARIADB_REPLICA;
	}

	/**
	 * Whether each node reaches the store through a proxy of its own, which the link
	 * faults act on. Sentinel tells the nodes the master's own address, so with it they
	 * reach the servers directly; the nodes of a replicated PostgreSQL name both servers,
	 * which one proxy cannot stand for. A replicated MariaDB is reached through proxies
	 * that a failover points at the new primary.
	 */
	boolean hasNodeLinks() {
		return this != REDIS_SENTINEL && this != JDBC_POSTGRES_REPLICA;
	}

	/** Whether the harness runs the store as a primary and a replica it fails over. */
	boolean isReplicated() {
		return this == REDIS_SENTINEL || this == JDBC_POSTGRES_REPLICA || this == JDBC_MARIADB_REPLICA;
	}

	/** The faults that apply to this store. */
	Set<FaultType> faultTypes() {
		Set<FaultType> types = EnumSet.allOf(FaultType.class);
		if (!hasNodeLinks()) {
			types.removeIf(FaultType::needsNodeLink);
		}
		if (isReplicated()) {
			types.remove(FaultType.RESTART_STORE);
		}
		else {
			types.remove(FaultType.FAILOVER_STORE);
		}
		return types;
	}

	static Backend of(String id) {
		return Arrays.stream(values())
			.filter((backend) -> backend.id.equals(id))
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("Unknown chaos backend '" + id + "'; use one of "
					+ Arrays.stream(values()).map(Backend::id).collect(Collectors.joining(", "))));
	}

	@Override
	public String toString() {
		return this.id;
	}

}
