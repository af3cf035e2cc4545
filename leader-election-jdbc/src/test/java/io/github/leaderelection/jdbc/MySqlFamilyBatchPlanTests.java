package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Stream;

import javax.sql.DataSource;

import io.github.leaderelection.jdbc.BatchSql.Bound;
import io.github.leaderelection.jdbc.BatchSql.Way;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.testing.TestDatabases;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Checks with {@code EXPLAIN} on the MariaDB or MySQL server that the statements on many
 * groups reach the lease table by its primary key, one row per group, and never scan it:
 * a scan would read every row, and an UPDATE would lock every row it read. At 10,000
 * rows, both for a table in the server's default character set and for one in
 * {@code latin1}, whose names the groups' JSON must be compared with in their own
 * character set; and at 3 rows, which a server would rather scan.
 */
class MySqlFamilyBatchPlanTests {

	private static final Duration LIVE = Duration.ofSeconds(30);

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	static Stream<Arguments> tables() {
		String latin1 = " DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci";
		return Stream.of(Arguments.of(Named.of("default character set", ""), 10_000),
				Arguments.of(Named.of("latin1", latin1), 10_000),
				Arguments.of(Named.of("default character set", ""), 3));
	}

	@ParameterizedTest(name = "{0}, {1} rows")
	@MethodSource("tables")
	void readsRenewsAndTakesEveryGroupByThePrimaryKey(String tableOptions, int rows) throws SQLException {
		DataSource dataSource = TestDatabases.mysqlFamily();
		String table = ScratchTable.uniqueName();
		ScratchTable.execute(dataSource, LeaseSql.ddl(table) + tableOptions);
		try {
			List<String> groups = new ArrayList<>(new TreeSet<>(newGroups(rows)));
			Map<String, Lease> taken = new JdbcLeaseStore(dataSource, table, false).tryAcquireAll(groups, "a", LIVE,
					TIMEOUT);
			assertThat(taken).hasSize(rows);
			List<Lease> leases = List.copyOf(taken.values());
			try (Connection connection = dataSource.getConnection()) {
				BatchSql batch = BatchSqlChooser.choose(connection, SqlDialect.MYSQL, table, TIMEOUT);
				assertThat(batch.way()).isEqualTo(Way.JSON_TABLE);
				assertReachesEachRowByPrimaryKey(explain(connection, batch.read(groups, false)));
				assertReachesEachRowByPrimaryKey(explain(connection, batch.read(groups, true)));
				assertReachesEachRowByPrimaryKey(explain(connection, batch.renew(leases, LIVE.toMillis())));
				// The upsert finds each row by its primary key as it inserts: its plan
				// reads the JSON only.
				List<Map<String, String>> upsert = explain(connection, batch.acquire(groups, "a", LIVE.toMillis()));
				assertThat(upsert).as("plan %s", upsert)
					.isNotEmpty()
					.allSatisfy((row) -> assertThat(row.get("table")).isIn("j", table));
				assertThat(upsert).as("plan %s", upsert)
					.filteredOn((row) -> table.equals(row.get("table")))
					.allSatisfy((row) -> assertThat(row.get("type")).isNotIn("ALL", "index", "range"));
			}
		}
		finally {
			ScratchTable.drop(dataSource, table);
		}
	}

	private static void assertReachesEachRowByPrimaryKey(List<Map<String, String>> plan) {
		assertThat(plan).as("plan %s", plan).hasSize(2);
		assertThat(plan.get(0).get("table")).as("the table read first, in plan %s", plan).isEqualTo("j");
		assertThat(plan.get(1).get("table")).isEqualTo("t");
		assertThat(plan.get(1).get("type")).as("plan %s", plan).isEqualTo("eq_ref");
		assertThat(plan.get(1).get("key")).as("plan %s", plan).isEqualTo("PRIMARY");
	}

	private static List<Map<String, String>> explain(Connection connection, Bound statement) throws SQLException {
		List<Map<String, String>> plan = new ArrayList<>();
		try (PreparedStatement explain = SqlRunner.prepare(connection, "EXPLAIN " + statement.sql(), TIMEOUT,
				statement.parameters()); ResultSet rows = explain.executeQuery()) {
			while (rows.next()) {
				Map<String, String> row = new LinkedHashMap<>();
				for (int i = 1; i <= rows.getMetaData().getColumnCount(); i++) {
					row.put(rows.getMetaData().getColumnLabel(i), rows.getString(i));
				}
				plan.add(row);
			}
		}
		return plan;
	}

	private static List<String> newGroups(int count) {
		List<String> groups = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			groups.add("group-" + UUID.randomUUID());
		}
		return groups;
	}

}
