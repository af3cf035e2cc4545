package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.github.leaderelection.jdbc.BatchSql.Bound;
import io.github.leaderelection.spi.Lease;
import org.jspecify.annotations.Nullable;

import static io.github.leaderelection.jdbc.SqlRunner.prepare;
import static io.github.leaderelection.jdbc.SqlRunner.remaining;
import static io.github.leaderelection.jdbc.SqlRunner.transaction;

/**
 * The take-overs of {@link JdbcLeaseStore#tryAcquireAll}: each group taken for the
 * candidate as {@link JdbcLeaseStore#tryAcquire} would take it, with one statement for
 * all on PostgreSQL, two in one transaction on MySQL 8.0.4+ and MariaDB 10.6+, and more
 * where groups are named in lists (see {@link BatchSql.Way}), each statement bounded by
 * what is left of the one call's timeout (its deadline on the {@link System#nanoTime()}
 * clock).
 *
 * <p>
 * The groups are sorted before they reach the database, so that calls that take the same
 * rows at the same time lock them in one order and cannot deadlock. Like
 * {@code tryAcquire}, taking a lease announces nothing on PostgreSQL: the others learn
 * that it is held when they next try.
 */
final class LeaseAcquisitions {

	private LeaseAcquisitions() {
	}

	/**
	 * Takes the groups' leases for the candidate where each may be taken, in one
	 * transaction that first reads the groups of {@code readFirst}, and passes each lease
	 * taken through {@code check} (which may write it again) before it commits.
	 * @param groups distinct groups
	 * @param readFirst the groups whose rows {@code check} is given as they were before
	 * @return the leases taken, by group as asked for, in the order asked for
	 */
	static Map<String, Lease> acquire(Connection connection, BatchSql batch, Set<String> groups, String candidateId,
			long millis, long deadline, Set<String> readFirst, TakenLeaseCheck check) throws SQLException {
		Set<String> sorted = new LinkedHashSet<>(new TreeSet<>(groups));
		return transaction(connection, () -> {
			Map<String, Lease> before = readFirst.isEmpty() ? Map.of()
					: LeaseBatches.read(connection, batch, readFirst, false, deadline);
			Map<String, Lease> taken = batch.acquireReturnsLeases()
					? takeReturning(connection, batch, sorted, candidateId, millis, deadline)
					: takeThenRead(connection, batch, sorted, candidateId, millis, deadline);
			Map<String, Lease> inOrder = new LinkedHashMap<>();
			for (String group : groups) {
				Lease lease = taken.get(group);
				if (lease != null) {
					inOrder.put(group, check.check(lease, before.get(group)));
				}
			}
			return inOrder;
		});
	}

	/** PostgreSQL and H2: statements that yield the leases they took. */
	private static Map<String, Lease> takeReturning(Connection connection, BatchSql batch, Set<String> groups,
			String candidateId, long millis, long deadline) throws SQLException {
		Map<String, Lease> rows = new HashMap<>();
		for (List<String> chunk : batch.perStatement(List.copyOf(groups))) {
			rows.putAll(takeChunk(connection, batch.acquire(chunk, candidateId, millis), deadline));
		}
		Map<String, Lease> taken = new HashMap<>();
		for (String group : groups) {
			Lease lease = rows.remove(group);
			if (lease != null) {
				taken.put(group, lease);
			}
		}
		if (!rows.isEmpty()) {
			// A row was taken under a name not asked for: the table's collation equates
			// names that differ. Which group asked for it is found by reading the name
			// each group left over has in the table.
			for (String group : groups) {
				if (!taken.containsKey(group)) {
					for (String name : LeaseBatches.query(connection, batch.read(List.of(group), false), deadline)
						.keySet()) {
						Lease lease = rows.get(name);
						if (lease != null) {
							taken.put(group, LeaseBatches.named(group, lease));
						}
					}
				}
			}
		}
		return taken;
	}

	/**
	 * Runs a statement that takes leases, again when it failed on a duplicate key: H2's
	 * MERGE inserts a group that it found missing even when another statement has
	 * inserted it since, and fails; run again, it finds the row, and judges it as a
	 * take-over.
	 */
	private static Map<String, Lease> takeChunk(Connection connection, Bound take, long deadline) throws SQLException {
		while (true) {
			try {
				return LeaseBatches.query(connection, take, deadline);
			}
			catch (SQLException ex) {
				if (!JdbcLeaseStore.isDuplicateKey(ex)) {
					throw ex;
				}
			}
		}
	}

	/**
	 * MySQL and MariaDB: an upsert that takes what may be taken and inserts what is
	 * missing, then a read of the rows that it locked, all of them until the transaction
	 * ends, those left alone included: the rows that name the candidate are exactly the
	 * ones it took (no forced leader can name it meanwhile), with their new terms and
	 * ends.
	 */
	private static Map<String, Lease> takeThenRead(Connection connection, BatchSql batch, Set<String> groups,
			String candidateId, long millis, long deadline) throws SQLException {
		for (List<String> chunk : batch.perStatement(List.copyOf(groups))) {
			Bound upsert = batch.acquire(chunk, candidateId, millis);
			try (PreparedStatement statement = prepare(connection, upsert.sql(), remaining(connection, deadline),
					upsert.parameters())) {
				statement.executeUpdate();
			}
		}
		Map<String, Lease> taken = new HashMap<>();
		LeaseBatches.read(connection, batch, groups, true, deadline).forEach((group, lease) -> {
			if (lease.isHeldBy(candidateId)) {
				taken.put(group, lease);
			}
		});
		return taken;
	}

	/** What is done with each lease taken before the transaction that took it commits. */
	@FunctionalInterface
	interface TakenLeaseCheck {

		/**
		 * @param taken the lease taken
		 * @param before the row as it was before, if it was read first and found
		 */
		Lease check(Lease taken, @Nullable Lease before) throws SQLException;

	}

}
