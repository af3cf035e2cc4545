package io.github.leaderelection.chaos;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The stores the harness can run an election on.
 */
enum Backend {

	JDBC_MARIADB("jdbc-mariadb"),

	JDBC_POSTGRES("jdbc-postgres"),

	REDIS("redis"),

	ZOOKEEPER("zookeeper"),

	ETCD("etcd");

	private final String id;

	Backend(String id) {
		this.id = id;
	}

	String id() {
		return this.id;
	}

	boolean isJdbc() {
		return this == JDBC_MARIADB || this == JDBC_POSTGRES;
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
