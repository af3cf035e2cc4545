package io.github.leaderelection.jdbc;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.UnaryOperator;

import io.github.leaderelection.spi.Lease;

/**
 * The statements of a {@link JdbcLeaseStore} on many groups at once, rendered once for
 * its table, its database and the way the server lets one statement name many groups
 * ({@link Way}). Every statement comes with the values to bind to it ({@link Bound});
 * group and candidate names are only ever bound, never put into SQL text.
 */
final class BatchSql {

	/**
	 * The most groups one statement names as a list of placeholders. MariaDB turns an IN
	 * list of 1000 values or more ({@code in_predicate_conversion_threshold}) into a
	 * subquery over a scan of the whole table, and an UPDATE locks every row it scans
	 * (InnoDB); 500 keeps both statements on the primary key, and far below every
	 * driver's limit of bind parameters (a renewal binds 3 per group, and 1 more).
	 */
	static final int MAX_GROUPS_PER_LIST = 500;

	// The columns of LeaseSql.read() first, so that JdbcLeaseStore.lease reads them,
	// then a group name.
	private static final String LEASE_COLUMNS = "t.holder_id, t.term, t.lease_until_ms - {now}, "
			+ "t.active_from_ms - {now}";

	private static final String READ_LIST = "SELECT " + LEASE_COLUMNS + ", t.group_name FROM {table} t "
			+ "WHERE t.group_name IN ({groups})";

	private static final String READ_ARRAY = "SELECT " + LEASE_COLUMNS + ", t.group_name FROM {table} t "
			+ "WHERE t.group_name = ANY(?::text[])";

	// The groups drive the join, so that the lease table is only read (and, by the
	// statements that write, locked) by its primary key, row by row in the order of
	// the array: the same order in every statement, as the array is sorted. Left to
	// itself, MariaDB scans a table of a few rows instead, and an UPDATE then locks
	// every row of it.
	private static final String READ_JSON = "SELECT " + LEASE_COLUMNS + ", j.g FROM JSON_TABLE(?, '$[*]' "
			+ "COLUMNS (g {groupType} PATH '$')) AS j STRAIGHT_JOIN {table} t FORCE INDEX (PRIMARY) "
			+ "ON t.group_name = j.g";

	// LeaseSql.RENEW for many leases: each row is matched on its own group, holder
	// and term.
	private static final String RENEW_LIST = "UPDATE {table} SET lease_until_ms = {now} + ? "
			+ "WHERE (group_name, holder_id, term) IN ({leases})";

	// The rows are locked in the order of their names first, as ACQUIRE_ARRAY locks
	// them, so that a renewal and a take-over of the same rows cannot deadlock.
	private static final String RENEW_ARRAY = "WITH renewable AS (SELECT t.group_name FROM {table} t "
			+ "JOIN unnest(?::text[], ?::text[], ?::bigint[]) AS l(g, h, term) "
			+ "ON t.group_name = l.g AND t.holder_id = l.h AND t.term = l.term "
			+ "ORDER BY t.group_name FOR UPDATE OF t) "
			+ "UPDATE {table} t SET lease_until_ms = {now} + ? FROM renewable r WHERE t.group_name = r.group_name "
			+ "RETURNING t.group_name";

	private static final String RENEW_JSON = "UPDATE JSON_TABLE(?, '$[*]' COLUMNS (g {groupType} PATH '$[0]', "
			+ "h {holderType} PATH '$[1]', term BIGINT PATH '$[2]')) AS j "
			+ "STRAIGHT_JOIN {table} t FORCE INDEX (PRIMARY) "
			+ "ON t.group_name = j.g AND t.holder_id = j.h AND t.term = j.term SET t.lease_until_ms = {now} + ?";

	// LeaseSql.INSERT and LeaseSql.ACQUIRE in one atomic statement per group: a
	// group never led gets its first term, a row that may be taken is taken as
	// ACQUIRE takes it, and the others are left alone and not returned. The rows are
	// locked in the order of their names.
	private static final String ACQUIRE_ARRAY = "INSERT INTO {table} AS t (group_name, holder_id, term, "
			+ "active_from_ms, lease_until_ms) SELECT g, ?, " + LeaseSql.FIRST_TERM
			+ ", {now}, {now} + ? FROM unnest(?::text[]) AS g ORDER BY g "
			+ "ON CONFLICT (group_name) DO UPDATE SET active_from_ms = GREATEST(t.lease_until_ms, {now}), "
			+ "holder_id = EXCLUDED.holder_id, term = GREATEST(t.term + 1, {nowMicros}), "
			+ "lease_until_ms = EXCLUDED.lease_until_ms "
			+ "WHERE t.holder_id IS NULL OR t.holder_id = EXCLUDED.holder_id OR t.lease_until_ms <= {now} "
			+ "RETURNING " + LEASE_COLUMNS + ", t.group_name";

	// The same on H2, whose MERGE yields the rows it inserted or updated.
	private static final String ACQUIRE_MERGE = "SELECT holder_id, term, lease_until_ms - {now}, "
			+ "active_from_ms - {now}, group_name FROM FINAL TABLE (MERGE INTO {table} t USING (VALUES {groups}) "
			+ "AS s(g) ON t.group_name = s.g WHEN MATCHED AND (t.holder_id IS NULL OR t.holder_id = ? "
			+ "OR t.lease_until_ms <= {now}) THEN UPDATE SET active_from_ms = GREATEST(t.lease_until_ms, {now}), "
			+ "holder_id = ?, term = GREATEST(t.term + 1, {nowMicros}), lease_until_ms = {now} + ? "
			+ "WHEN NOT MATCHED THEN INSERT (group_name, holder_id, term, active_from_ms, lease_until_ms) "
			+ "VALUES (s.g, ?, " + LeaseSql.FIRST_TERM + ", {now}, {now} + ?))";

	private static final String TAKEABLE = "(holder_id IS NULL OR holder_id = ? OR lease_until_ms <= {now})";

	// MySQL and MariaDB assign left to right with the values already assigned, and
	// every assignment asks TAKEABLE again: active_from_ms and term come first because
	// TAKEABLE does not read them, holder_id before lease_until_ms because once
	// holder_id names the candidate TAKEABLE holds whatever lease_until_ms becomes,
	// and neither changes where TAKEABLE did not hold. active_from_ms reads the old
	// lease end, as in ACQUIRE. A row left alone is still locked until the
	// transaction ends.
	private static final String TAKE_ON_DUPLICATE = " ON DUPLICATE KEY UPDATE active_from_ms = IF(" + TAKEABLE
			+ ", GREATEST(lease_until_ms, {now}), active_from_ms), term = IF(" + TAKEABLE + ", " + LeaseSql.NEXT_TERM
			+ ", term), " + "holder_id = IF(" + TAKEABLE + ", ?, holder_id), lease_until_ms = IF(" + TAKEABLE
			+ ", {now} + ?, lease_until_ms)";

	private static final String UPSERT_COLUMNS = "INSERT INTO {table} (group_name, holder_id, term, active_from_ms, "
			+ "lease_until_ms) ";

	private static final String UPSERT_LIST = UPSERT_COLUMNS + "VALUES {rows}" + TAKE_ON_DUPLICATE;

	// In the order of the array, as READ_JSON and RENEW_JSON lock rows.
	private static final String UPSERT_JSON = UPSERT_COLUMNS + "SELECT j.g, ?, " + LeaseSql.FIRST_TERM
			+ ", {now}, {now} + ? FROM "
			+ "JSON_TABLE(?, '$[*]' COLUMNS (i FOR ORDINALITY, g {groupType} PATH '$')) AS j ORDER BY j.i"
			+ TAKE_ON_DUPLICATE;

	private final Way way;

	private final SqlDialect dialect;

	private final UnaryOperator<String> render;

	private BatchSql(Way way, SqlDialect dialect, String table, String groupType, String holderType) {
		this.way = way;
		this.dialect = dialect;
		this.render = (template) -> template.replace("{table}", table)
			.replace("{nowMicros}", dialect.nowMicros())
			.replace("{now}", dialect.nowMillis())
			.replace("{groupType}", groupType)
			.replace("{holderType}", holderType);
	}

	/** The statements that name groups in lists of placeholders. */
	static BatchSql lists(SqlDialect dialect, String table) {
		return new BatchSql(Way.LISTS, dialect, table, "", "");
	}

	/** The statements that name groups in PostgreSQL arrays. */
	static BatchSql arrays(String table) {
		return new BatchSql(Way.ARRAYS, SqlDialect.POSTGRESQL, table, "", "");
	}

	/**
	 * The statements that name groups in a JSON array, read with {@code JSON_TABLE} into
	 * columns of the given types: the types of the table's own columns, character set and
	 * collation included, as a comparison between different ones would not use the
	 * primary key (MariaDB then joins every group with every row).
	 * @param groupType the type of the {@code group_name} column, such as
	 * {@code VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci}
	 * @param holderType the type of the {@code holder_id} column
	 */
	static BatchSql jsonTable(String table, String groupType, String holderType) {
		return new BatchSql(Way.JSON_TABLE, SqlDialect.MYSQL, table, groupType, holderType);
	}

	Way way() {
		return this.way;
	}

	/** Splits items into lists of as many as one statement names, one per statement. */
	<T> List<List<T>> perStatement(List<T> items) {
		if (this.way != Way.LISTS) {
			return List.of(items);
		}
		List<List<T>> chunks = new ArrayList<>();
		for (int from = 0; from < items.size(); from += MAX_GROUPS_PER_LIST) {
			chunks.add(items.subList(from, Math.min(items.size(), from + MAX_GROUPS_PER_LIST)));
		}
		return chunks;
	}

	/**
	 * Returns the query that reads the groups' leases, with the columns of
	 * {@link LeaseSql#read()} followed by a group name: the name asked for with
	 * {@code JSON_TABLE}, the name in the table otherwise (they differ where the table's
	 * collation equates names that differ).
	 * @param lock whether to lock the rows read until the transaction ends, reading their
	 * latest version (MySQL and MariaDB only)
	 */
	Bound read(List<String> groups, boolean lock) {
		String forUpdate = lock ? " FOR UPDATE" : "";
		return switch (this.way) {
			case LISTS -> new Bound(sql(READ_LIST).replace("{groups}", placeholders("?", groups.size())) + forUpdate,
					groups.toArray());
			// One value, the array, rather than the array's elements as the values.
			case ARRAYS -> new Bound(sql(READ_ARRAY) + forUpdate, (Object) groups.toArray(String[]::new));
			case JSON_TABLE -> new Bound(sql(READ_JSON) + forUpdate, JsonArrays.of(groups));
		};
	}

	/**
	 * Returns the statement that renews the leases (each with a holder), each only if its
	 * row still has its holder and term: where {@link #renewReturnsGroups()}, a query
	 * that yields the name in the table of each group it renewed; elsewhere an update
	 * that counts them.
	 */
	Bound renew(List<Lease> leases, long millis) {
		return switch (this.way) {
			case LISTS -> renewList(leases, millis);
			case ARRAYS -> new Bound(sql(RENEW_ARRAY), leases.stream().map(Lease::group).toArray(String[]::new),
					leases.stream().map(Lease::holder).toArray(String[]::new),
					leases.stream().map(Lease::term).toArray(Long[]::new), millis);
			case JSON_TABLE -> new Bound(sql(RENEW_JSON), JsonArrays.ofLeases(leases), millis);
		};
	}

	boolean renewReturnsGroups() {
		return this.dialect != SqlDialect.MYSQL;
	}

	/**
	 * Returns the statement that takes the groups' leases for the candidate, each as
	 * {@link LeaseSql#insert()} or {@link LeaseSql#acquire()} would. Where
	 * {@link #acquireReturnsLeases()}, a query that yields each lease taken, with the
	 * columns of {@link #read}, the name being the table's; elsewhere (MySQL and MariaDB)
	 * an update that must run in a transaction, followed by a {@link #read locking read}
	 * of the same groups: the rows that then name the candidate are exactly the ones it
	 * took, because it holds the lock of every row it left alone too.
	 * @param groups distinct groups, sorted, so that concurrent calls lock their rows in
	 * one order
	 */
	Bound acquire(List<String> groups, String candidateId, long millis) {
		return switch (this.way) {
			case ARRAYS -> new Bound(sql(ACQUIRE_ARRAY), candidateId, millis, groups.toArray(String[]::new));
			case JSON_TABLE ->
				new Bound(sql(UPSERT_JSON), concat(new Object[] { candidateId, millis, JsonArrays.of(groups) },
						takeOnDuplicate(candidateId, millis)));
			case LISTS -> (this.dialect == SqlDialect.H2) ? acquireMerge(groups, candidateId, millis)
					: upsertList(groups, candidateId, millis);
		};
	}

	boolean acquireReturnsLeases() {
		return this.dialect != SqlDialect.MYSQL;
	}

	private Bound renewList(List<Lease> leases, long millis) {
		String update = sql(RENEW_LIST).replace("{leases}", placeholders("(?, ?, ?)", leases.size()));
		String returning = this.dialect.returning(update, "group_name");
		Object[] parameters = new Object[1 + 3 * leases.size()];
		parameters[0] = millis;
		for (int i = 0; i < leases.size(); i++) {
			Lease lease = leases.get(i);
			parameters[1 + 3 * i] = lease.group();
			parameters[2 + 3 * i] = lease.holder();
			parameters[3 + 3 * i] = lease.term();
		}
		return new Bound((returning != null) ? returning : update, parameters);
	}

	private Bound acquireMerge(List<String> groups, String candidateId, long millis) {
		String merge = sql(ACQUIRE_MERGE).replace("{groups}", placeholders("(CAST(? AS VARCHAR))", groups.size()));
		return new Bound(merge,
				concat(groups.toArray(), new Object[] { candidateId, candidateId, millis, candidateId, millis }));
	}

	private Bound upsertList(List<String> groups, String candidateId, long millis) {
		String upsert = sql(UPSERT_LIST).replace("{rows}",
				placeholders(sql("(?, ?, " + LeaseSql.FIRST_TERM + ", {now}, {now} + ?)"), groups.size()));
		Object[] rows = new Object[3 * groups.size()];
		for (int i = 0; i < groups.size(); i++) {
			rows[3 * i] = groups.get(i);
			rows[3 * i + 1] = candidateId;
			rows[3 * i + 2] = millis;
		}
		return new Bound(upsert, concat(rows, takeOnDuplicate(candidateId, millis)));
	}

	/** The values of {@link #TAKE_ON_DUPLICATE}'s placeholders, in order. */
	private static Object[] takeOnDuplicate(String candidateId, long millis) {
		return new Object[] { candidateId, candidateId, candidateId, candidateId, candidateId, millis };
	}

	private String sql(String template) {
		return this.render.apply(template);
	}

	private static Object[] concat(Object[] first, Object[] second) {
		Object[] all = new Object[first.length + second.length];
		System.arraycopy(first, 0, all, 0, first.length);
		System.arraycopy(second, 0, all, first.length, second.length);
		return all;
	}

	private static String placeholders(String one, int count) {
		return String.join(", ", Collections.nCopies(count, one));
	}

	/** How one statement names many groups. */
	enum Way {

		/**
		 * PostgreSQL: array parameters, one statement for any number of groups.
		 */
		ARRAYS,

		/**
		 * MySQL 8.0.4 and later, MariaDB 10.6 and later: one JSON array parameter read
		 * with {@code JSON_TABLE}, one statement for any number of groups.
		 */
		JSON_TABLE,

		/**
		 * H2, and older MySQL and MariaDB: lists of placeholders, one statement for every
		 * {@value #MAX_GROUPS_PER_LIST} groups.
		 */
		LISTS

	}

	/**
	 * A statement and the values to bind to its placeholders, in order. A
	 * {@code String[]} or {@code Long[]} value is bound as a PostgreSQL {@code text[]} or
	 * {@code bigint[]} array.
	 */
	record Bound(String sql, Object... parameters) {
	}

}
