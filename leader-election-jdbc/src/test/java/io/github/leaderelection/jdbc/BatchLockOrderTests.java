package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;

import javax.sql.DataSource;

import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.testing.TestDatabases;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests that the statements that name any number of groups lock the groups' rows in the
 * order of their names, whatever order the groups are given in, so that two of them on
 * the same rows (a node renewing leases that ran out, another taking them over) cannot
 * deadlock. With the first row locked elsewhere, a batch must wait for it holding no
 * other row.
 */
class BatchLockOrderTests {

	private static final Duration LIVE = Duration.ofSeconds(30);

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	static Stream<Named<Supplier<DataSource>>> databases() {
		return Stream.of(Named.of("MySQL family", TestDatabases::mysqlFamily),
				Named.of("PostgreSQL", TestDatabases::postgres));
	}

	@ParameterizedTest
	@MethodSource("databases")
	void takesRowsInTheOrderOfTheirNames(Supplier<DataSource> database) throws Exception {
		ScratchTable table = ScratchTable.create(database.get());
		try {
			List<String> groups = groups();
			insertInReverse(table, groups, Duration.ZERO);
			JdbcLeaseStore taking = table.store();
			taking.readAll(groups, TIMEOUT);
			List<String> reversed = new ArrayList<>(groups);
			Collections.reverse(reversed);
			Map<String, Lease> taken = whileFirstRowIsLocked(table, groups,
					() -> taking.tryAcquireAll(reversed, "b", LIVE, TIMEOUT));
			assertThat(taken).containsOnlyKeys(groups);
		}
		finally {
			table.drop();
		}
	}

	@ParameterizedTest
	@MethodSource("databases")
	void renewsRowsInTheOrderOfTheirNames(Supplier<DataSource> database) throws Exception {
		ScratchTable table = ScratchTable.create(database.get());
		try {
			List<String> groups = groups();
			JdbcLeaseStore renewing = table.store();
			List<Lease> leases = insertInReverse(table, groups, LIVE);
			renewing.readAll(groups, TIMEOUT);
			assertThat(whileFirstRowIsLocked(table, groups, () -> renewing.renewAll(leases, LIVE, TIMEOUT).keySet()))
				.containsExactlyInAnyOrderElementsOf(groups);
		}
		finally {
			table.drop();
		}
	}

	/**
	 * Takes the groups' leases for candidate "a" one by one, last group first, so that a
	 * table scan would meet the rows in the reverse order of their names.
	 */
	private static List<Lease> insertInReverse(ScratchTable table, List<String> groups, Duration leaseDuration) {
		List<Lease> leases = new ArrayList<>();
		for (int i = groups.size() - 1; i >= 0; i--) {
			leases.add(table.store().tryAcquire(groups.get(i), "a", leaseDuration, TIMEOUT).orElseThrow());
		}
		return leases;
	}

	/**
	 * Runs the batch while the first group's row is locked by another transaction, and
	 * checks, once the batch waits for that lock, that it holds none of the other rows.
	 */
	private static <T> T whileFirstRowIsLocked(ScratchTable table, List<String> groups, Batch<T> batch)
			throws Exception {
		DataSource dataSource = table.dataSource();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try (Connection blocker = dataSource.getConnection(); Connection probe = dataSource.getConnection()) {
			blocker.setAutoCommit(false);
			lock(blocker, table.name(), groups.get(0), "");
			Future<T> result = executor.submit(batch::run);
			await().atMost(TIMEOUT).until(() -> waitingForLocks(probe) > 0);
			probe.setAutoCommit(false);
			// Fails at once if the batch holds any of the other rows.
			for (String group : groups.subList(1, groups.size())) {
				lock(probe, table.name(), group, " NOWAIT");
			}
			probe.rollback();
			probe.setAutoCommit(true);
			blocker.commit();
			return result.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
		}
		finally {
			executor.shutdownNow();
		}
	}

	/**
	 * Locks a group's row until the transaction ends, found by its primary key alone: a
	 * list of names would let the server scan a small table, and lock rows in passing.
	 */
	private static void lock(Connection connection, String table, String group, String wait) throws SQLException {
		String sql = "SELECT group_name FROM " + table + " WHERE group_name = ? FOR UPDATE" + wait;
		try (PreparedStatement statement = SqlRunner.prepare(connection, sql, TIMEOUT, group);
				ResultSet rows = statement.executeQuery()) {
			assertThat(rows.next()).as("row of %s", group).isTrue();
		}
	}

	/** The number of statements of the database that wait for a lock. */
	private static int waitingForLocks(Connection connection) throws SQLException {
		String product = connection.getMetaData().getDatabaseProductName();
		String sql = (SqlDialect.forProductName(product) == SqlDialect.POSTGRESQL)
				? "SELECT count(*) FROM pg_stat_activity WHERE cardinality(pg_blocking_pids(pid)) > 0"
				: "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'";
		try (PreparedStatement statement = connection.prepareStatement(sql);
				ResultSet rows = statement.executeQuery()) {
			rows.next();
			return rows.getInt(1);
		}
	}

	/** Three groups whose names sort alike in Java and in the databases' collations. */
	private static List<String> groups() {
		String prefix = "group-" + UUID.randomUUID() + "-";
		return List.of(prefix + "a", prefix + "b", prefix + "c");
	}

	@FunctionalInterface
	private interface Batch<T> {

		T run() throws Exception;

	}

}
