package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.leaderelection.spi.Lease;

import static io.github.leaderelection.jdbc.SqlRunner.prepare;
import static io.github.leaderelection.jdbc.SqlRunner.remaining;

/**
 * The work of {@link JdbcLeaseStore} on many groups at once: one statement for every
 * {@value LeaseSql#MAX_GROUPS_PER_STATEMENT} groups, each statement bounded by what is
 * left of the one call's timeout (its deadline on the {@link System#nanoTime()} clock).
 */
final class LeaseBatches {

	private LeaseBatches() {
	}

	/**
	 * Renews the leases, each only if its row still has its holder and term.
	 * @param leases leases with holders
	 * @return the groups renewed
	 */
	static Set<String> renew(Connection connection, LeaseSql sql, List<Lease> leases, long millis, long deadline)
			throws SQLException {
		Set<String> renewed = new LinkedHashSet<>();
		for (List<Lease> chunk : LeaseSql.perStatement(leases)) {
			renewed.addAll(renewChunk(connection, sql, chunk, millis, deadline));
		}
		return renewed;
	}

	/**
	 * Reads the groups' leases, each under the name it was asked for.
	 * @return the leases of the groups that have a row, by group
	 */
	static Map<String, Lease> read(Connection connection, LeaseSql sql, Set<String> groups, long deadline)
			throws SQLException {
		Map<String, Lease> rows = new HashMap<>();
		for (List<String> chunk : LeaseSql.perStatement(List.copyOf(groups))) {
			try (PreparedStatement statement = prepare(connection, sql.readAll(chunk.size()),
					remaining(connection, deadline), chunk.toArray()); ResultSet result = statement.executeQuery()) {
				while (result.next()) {
					String name = result.getString(5);
					rows.put(name, JdbcLeaseStore.lease(name, result));
				}
			}
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
					JdbcLeaseStore.read(connection, sql, group, remaining(connection, deadline))
						.ifPresent((lease) -> leases.put(group, lease));
				}
			}
		}
		return leases;
	}

	private static Set<String> renewChunk(Connection connection, LeaseSql sql, List<Lease> leases, long millis,
			long deadline) throws SQLException {
		Object[] parameters = new Object[1 + 3 * leases.size()];
		parameters[0] = millis;
		Set<String> groups = new LinkedHashSet<>();
		for (int i = 0; i < leases.size(); i++) {
			Lease lease = leases.get(i);
			groups.add(lease.group());
			parameters[1 + 3 * i] = lease.group();
			parameters[2 + 3 * i] = lease.holder();
			parameters[3 + 3 * i] = lease.term();
		}
		Set<String> renewed = new LinkedHashSet<>();
		boolean known;
		try (PreparedStatement statement = prepare(connection, sql.renewAll(leases.size()),
				remaining(connection, deadline), parameters)) {
			if (sql.renewAllReturnsGroups()) {
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
		Map<String, Lease> current = read(connection, sql, groups, deadline);
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
