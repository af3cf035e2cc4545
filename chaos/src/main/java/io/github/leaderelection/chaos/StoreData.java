package io.github.leaderelection.chaos;

import io.github.leaderelection.testing.EtcdServer;
import io.github.leaderelection.testing.StoreServer;

/**
 * What the {@code lose-store-data} fault does to the election's own data in the store, by
 * hand, the way an operator, a restore or a bad script would: behind the election's back,
 * on the harness's own store server (never a shared one). One implementation per store;
 * each operation returns a short description without spaces, for the fault's record.
 */
interface StoreData extends AutoCloseable {

	/**
	 * Connects to the store, or to the primary of the moment, unless connected: the
	 * operations that follow use that connection, so that a change starts as soon as it
	 * is asked for (a first client can take seconds to start).
	 */
	void connect() throws Exception;

	/** The election's data as it is now, to be written back later. */
	Copy copy() throws Exception;

	/**
	 * Replaces the election's data with an earlier copy, as a restore from a backup
	 * would.
	 */
	String restore(Copy copy) throws Exception;

	/**
	 * Deletes the group's record; with {@code leaseToo}, also what the store keeps of the
	 * live lease apart from it, where it keeps it apart (a JDBC row is both at once).
	 */
	String deleteGroup(String group, boolean leaseToo) throws Exception;

	/**
	 * Deletes all of the election's data; {@code drastic} takes the blunter tool where
	 * the store has one ({@code TRUNCATE}, {@code FLUSHALL}).
	 */
	String wipe(boolean drastic) throws Exception;

	/** Lowers the term on the group's record by {@code by} (not below 0). */
	String lowerTerm(String group, long by) throws Exception;

	/** A copy of the election's data, in the store's own terms. */
	interface Copy {

		/** How many records, keys or nodes it holds. */
		int size();

	}

	/**
	 * The election's data of the run's store, as the nodes name it (see
	 * {@code ChaosNode.openStore}).
	 */
	static StoreData of(Backend backend, StoreServer store) {
		return switch (backend) {
			case JDBC_MARIADB, JDBC_POSTGRES, JDBC_MARIADB_REPLICA, JDBC_POSTGRES_REPLICA -> new JdbcStoreData(store);
			case REDIS, REDIS_SENTINEL -> new RedisStoreData(store);
			case ZOOKEEPER -> new ZookeeperStoreData(store.clientAddress());
			case ETCD -> new EtcdStoreData(((EtcdServer) store).endpoint());
		};
	}

}
