package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.leaderelection.jdbc.BatchSql.Bound;
import io.github.leaderelection.spi.Lease;

import static io.github.leaderelection.jdbc.SqlRunner.prepare;
import static io.github.leaderelection.jdbc.SqlRunner.remaining;

/**
 * The renewals and reads of {@link JdbcLeaseStore} on many groups at once: one statement
 * for all where the server can name any number of groups in one, one for every
 * {@value BatchSql#MAX_GROUPS_PER_LIST} groups elsewhere (see {@link BatchSql.Way}), each
 * statement bounded by what is left of the one call's timeout (its deadline on the
 * {@link System#nanoTime()} clock).
 */
final class LeaseBatches {

	private LeaseBatches() {
	}

	/**
	 * Renews the leases, each only if its row still has its holder and term.
	 * @param leases leases with holders
	 * @return the groups renewed
	 */
	static Set<String> renew(Connection connection, BatchSql batch, List<Lease> leases, long millis, long deadline)
			throws SQLException {
		// In the order of their names, as LeaseAcquisitions takes them: where the order
		// of the statement's values is the order of its locks (MySQL and MariaDB), a
		// renewal and a take-over of the same rows then cannot deadlock.
		List<Lease> sorted = leases.stream().sorted(Comparator.comparing(Lease::group)).toList();
		Set<String> renewed = new LinkedHashSet<>();
		for (List<Lease> chunk : batch.perStatement(sorted)) {
			renewed.addAll(renewChunk(connection, batch, chunk, millis, deadline));
		}
		return renewed;
	}

	/**
	 * Reads the groups' leases, each under the name it was asked for.
	 * @param lock whether to lock the rows read until the transaction ends, reading their
	 * latest version (MySQL and MariaDB only)
	 * @return the leases of the groups that have a row, by group
	 */
	static Map<String, Lease> read(Connection connection, BatchSql batch, Set<String> groups, boolean lock,
			long deadline) throws SQLException {
		Map<String, Lease> rows = new HashMap<>();
		for (List<String> chunk : batch.perStatement(List.copyOf(groups))) {
			rows.putAll(query(connection, batch.read(chunk, lock), deadline));
		}
		Map<String, Lease> leases = new LinkedHashMap<>();
		for (String group : groups) {
			Lease lease = rows.remove(group);
			if (lease != null) {
				leases.put(group, lease);
			}
		}
		if (!rows.isEmpty()) {
			// A row came back under a name not asked for: the table's collation equates
			// names that differ (MySQL's default ones ignore case and trailing spaces).
			// The groups left without a lease are read one by one, as read would.
			for (String group : groups) {
				if (!leases.containsKey(group)) {
					query(connection, batch.read(List.of(group), lock), deadline).values()
						.stream()
						.findFirst()
						.ifPresent((lease) -> leases.put(group, named(group, lease)));
				}
			}
		}
		return leases;
	}

	/**
	 * Runs a query whose columns are those of {@link BatchSql#read}, returning its leases
	 * by the name in its fifth column.
	 */
	static Map<String, Lease> query(Connection connection, Bound query, long deadline) throws SQLException {
		Map<String, Lease> leases = new LinkedHashMap<>();
		try (PreparedStatement statement = prepare(connection, query.sql(), remaining(connection, deadline),
				query.parameters()); ResultSet rows = statement.executeQuery()) {
			while (rows.next()) {
				String name = rows.getString(5);
				leases.put(name, JdbcLeaseStore.lease(name, rows));
			}
		}
		return leases;
	}

	/** Returns the lease under another name of its group. */
	static Lease named(String group, Lease lease) {
		return new Lease(group, lease.holder(), lease.term(), lease.expiresIn(), lease.activeIn(), lease.version());
	}

	private static Set<String> renewChunk(Connection connection, BatchSql batch, List<Lease> leases, long millis,
			long deadline) throws SQLException {
		Set<String> groups = new LinkedHashSet<>();
		for (Lease lease : leases) {
			groups.add(lease.group());
		}
		Set<String> renewed = new LinkedHashSet<>();
		boolean known;
		Bound renewal = batch.renew(leases, millis);
		try (PreparedStatement statement = prepare(connection, renewal.sql(), remaining(connection, deadline),
				renewal.parameters())) {
			if (batch.renewReturnsGroups()) {
				try (ResultSet rows = statement.executeQuery()) {
					while (rows.next()) {
						renewed.add(rows.getString(1));
					}
				}
				// A name not asked for comes from a collation that equates names (see
				// read): which lease it renewed is then read below.
				known = groups.containsAll(renewed);
			}
			else {
				// Each lease matches at most its group's one row, so a full count means
				// every lease matched. Under "affected rows" semantics a row that already
				// had the new end counts 0 although it matched: the count is then short.
				known = statement.executeUpdate() >= leases.size();
				if (known) {
					renewed.addAll(groups);
				}
			}
		}
		if (known) {
			return renewed;
		}
		// As renew does: once a row has left a holder and term it never returns to them
		// (every take-over raises the term), so a row that still has them had them for
		// the UPDATE, which then set the new end. One read for all, and only now.
		Map<String, Lease> current = read(connection, batch, groups, false, deadline);
		renewed.clear();
		for (Lease lease : leases) {
			Lease now = current.get(lease.group());
			if (now != null && now.isHeldBy(lease.holder()) && now.term() == lease.term()) {
				renewed.add(lease.group());
			}
		}
		return renewed;
	}

}
