package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.stream.Stream;

import javax.sql.DataSource;

import io.github.leaderelection.testing.TestDatabases;
import com.zaxxer.hikari.HikariDataSource;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.spi.Lease;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

/**
 * Tests for what only {@link JdbcLeaseStore} does: its table, its SQL on each database
 * and its use of connections. The lease rules are in the backend subclasses of the
 * contract tests.
 */
class JdbcLeaseStoreTests {

	private static final Duration LIVE = Duration.ofSeconds(30);

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	static Stream<Named<Supplier<DataSource>>> databases() {
		return Stream.of(Named.of("H2", TestDatabases::h2),
				Named.of("H2 in MySQL mode", () -> TestDatabases.h2("MySQL")),
				Named.of("H2 in MariaDB mode", () -> TestDatabases.h2("MariaDB")),
				Named.of("H2 in PostgreSQL mode", () -> TestDatabases.h2("PostgreSQL")),
				Named.of("MySQL family", TestDatabases::mysqlFamily),
				Named.of("MySQL family, affected rows",
						() -> TestDatabases.mysqlFamily(Map.of("useAffectedRows", "true"))),
				Named.of("PostgreSQL", TestDatabases::postgres));
	}

	@Test
	void ddlIsTheSameForEveryDatabaseAndCreatesTheLeaseTheRunsAndTheCandidatesTable() {
		DataSource unused = new SingleConnectionDataSource();
		assertThat(new JdbcLeaseStore(unused).ddl()).startsWith("CREATE TABLE IF NOT EXISTS leader_election (")
			.contains(");\nCREATE TABLE IF NOT EXISTS leader_election_candidates (");
		String ddl = new JdbcLeaseStore(unused, "app.elections").ddl();
		assertThat(ddl.split(";\n")).hasSize(3)
			.satisfiesExactly(
					(leases) -> assertThat(leases).startsWith("CREATE TABLE IF NOT EXISTS app.elections (")
						.contains("group_name", "holder_id", "term", "active_from_ms", "lease_until_ms"),
					(runs) -> assertThat(runs).startsWith("CREATE TABLE IF NOT EXISTS app.elections_runs (")
						.contains("group_name", "job_name", "tick_ms", "holder_id", "term", "started_ms", "ended_ms",
								"outcome"),
					(candidates) -> assertThat(candidates)
						.startsWith("CREATE TABLE IF NOT EXISTS app.elections_candidates (")
						.contains("candidate_id", "weight", "alive_until_ms"));
		assertThat(ddl).doesNotEndWith(";");
	}

	static Stream<String> invalidTableNames() {
		return Stream.of("a".repeat(64), "s." + "a".repeat(64), "a.b.c", ".a", "a.", "s.1a", "1s.a", "a..b", "ä", "a-b",
				"a$b", "a\n", "a.b\n");
	}

	@ParameterizedTest
	@MethodSource("invalidTableNames")
	void rejectsTableNamesThatAreNotIdentifiers(String name) {
		DataSource unused = new SingleConnectionDataSource();
		assertThatIllegalArgumentException().isThrownBy(() -> new JdbcLeaseStore(unused, name))
			.withMessageContaining("'" + name + "'")
			.withMessageContaining(TableName.PATTERN);
	}

	@Test
	void acceptsLongestAndSchemaQualifiedTableNames() {
		DataSource unused = new SingleConnectionDataSource();
		String longest = "_" + "a1".repeat(31);
		assertThat(longest).hasSize(63);
		assertThat(new JdbcLeaseStore(unused, longest).ddl()).contains(longest);
		assertThat(new JdbcLeaseStore(unused, longest + "." + longest).ddl()).contains(longest + "." + longest);
		assertThatNullPointerException().isThrownBy(() -> new JdbcLeaseStore(unused, null));
	}

	@Test
	void recognisesSupportedDatabasesAndNamesThemForOthers() {
		assertThat(SqlDialect.forProductName("MySQL")).isEqualTo(SqlDialect.MYSQL);
		assertThat(SqlDialect.forProductName("MariaDB")).isEqualTo(SqlDialect.MYSQL);
		assertThat(SqlDialect.forProductName("PostgreSQL")).isEqualTo(SqlDialect.POSTGRESQL);
		assertThat(SqlDialect.forProductName("H2")).isEqualTo(SqlDialect.H2);
		assertThatIllegalStateException().isThrownBy(() -> SqlDialect.forProductName("Apache Derby"))
			.withMessageContaining("'Apache Derby'")
			.withMessageContaining("MySQL, MariaDB, PostgreSQL, H2");
	}

	@ParameterizedTest
	@MethodSource("databases")
	void verifyTableReportsMissingTableWithItsDdl(Supplier<DataSource> database) {
		JdbcLeaseStore store = new JdbcLeaseStore(database.get(), ScratchTable.uniqueName());
		assertThatIllegalStateException().isThrownBy(store::verifyTable).withMessageContaining(store.ddl());
	}

	@ParameterizedTest
	@MethodSource("databases")
	void operationsOnMissingTableFailNamingOperationGroupAndTable(Supplier<DataSource> database) {
		String table = ScratchTable.uniqueName();
		JdbcLeaseStore store = new JdbcLeaseStore(database.get(), table);
		assertThatExceptionOfType(LeaderElectionException.class)
			.isThrownBy(() -> store.tryAcquire("orders", "a", LIVE, TIMEOUT))
			.withMessageContaining("acquire")
			.withMessageContaining("'orders'")
			.withMessageContaining(table);
	}

	@ParameterizedTest
	@MethodSource("databases")
	void createsTableOnlyIfMissing(Supplier<DataSource> database) {
		ScratchTable table = ScratchTable.create(database.get());
		try {
			JdbcLeaseStore store = table.store();
			Lease lease = store.tryAcquire("orders", "a", LIVE, TIMEOUT).orElseThrow();
			store.createTableIfMissing();
			store.verifyTable();
			assertThat(store.read("orders", TIMEOUT)).hasValueSatisfying((read) -> {
				assertThat(read.holder()).isEqualTo("a");
				assertThat(read.term()).isEqualTo(lease.term());
			});
		}
		finally {
			table.drop();
		}
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void warnsOnceWithStatementWhenTableCannotBeCreatedOnFirstUse(CapturedOutput output) {
		// A schema that does not exist: the database answers, and refuses to create the
		// table there.
		String table = "no_such_schema_" + ScratchTable.uniqueName() + ".leases";
		JdbcLeaseStore store = new JdbcLeaseStore(TestDatabases.h2(), table);
		store.prepareTableOnFirstUse(true);
		assertThatExceptionOfType(LeaderElectionException.class).isThrownBy(() -> store.read("orders", TIMEOUT));
		assertThatExceptionOfType(LeaderElectionException.class).isThrownBy(() -> store.read("orders", TIMEOUT));
		assertThat(output)
			.containsOnlyOnce("The database answers, but the leader election table " + table
					+ " could not be created, and the election fails until it exists")
			.contains("Make sure the database user may create it, or create it with:\n" + store.ddl() + ";");
	}

	@ParameterizedTest
	@MethodSource("databases")
	void createsTableOnFirstUseOnceDatabaseAnswers(Supplier<DataSource> database) {
		DataSource dataSource = database.get();
		DatabaseOutage outage = new DatabaseOutage(dataSource);
		String table = ScratchTable.uniqueName();
		JdbcLeaseStore store = new JdbcLeaseStore(outage, table, false);
		store.prepareTableOnFirstUse(true);
		try {
			assertThatExceptionOfType(LeaderElectionException.class)
				.isThrownBy(() -> store.tryAcquire("orders", "a", LIVE, TIMEOUT))
				.withMessageContaining("Connection refused");
			outage.end();
			Lease lease = store.tryAcquire("orders", "a", LIVE, TIMEOUT).orElseThrow();
			assertThat(lease.term()).isPositive();
			new JdbcLeaseStore(dataSource, table).verifyTable();
		}
		finally {
			ScratchTable.drop(dataSource, table);
		}
	}

	@ParameterizedTest
	@MethodSource("databases")
	@ExtendWith(OutputCaptureExtension.class)
	void checksTableOnFirstUseNamingStatementWhileItIsMissing(Supplier<DataSource> database, CapturedOutput output) {
		ScratchTable table = new ScratchTable(database.get(), ScratchTable.uniqueName());
		JdbcLeaseStore store = table.store();
		store.prepareTableOnFirstUse(false);
		try {
			assertThatIllegalStateException().isThrownBy(() -> store.read("orders", TIMEOUT))
				.withMessageContaining("The leader election table " + table.name() + " is missing")
				.withMessageContaining(store.ddl());
			assertThatIllegalStateException().isThrownBy(() -> store.tryAcquire("orders", "a", LIVE, TIMEOUT))
				.withMessageContaining(store.ddl());
			// Once, and the election may have warned of an outage before: the store says
			// it itself.
			assertThat(output)
				.containsOnlyOnce("The database answers, but the election fails until the leader " + "election table "
						+ table.name() + " is usable")
				.contains(store.ddl());
			new JdbcLeaseStore(table.dataSource(), table.name()).createTableIfMissing();
			assertThat(store.tryAcquire("orders", "a", LIVE, TIMEOUT)).isPresent();
		}
		finally {
			table.drop();
		}
	}

	@ParameterizedTest
	@MethodSource("databases")
	void worksOnSchemaQualifiedTable(Supplier<DataSource> database) {
		DataSource dataSource = database.get();
		String schema = "le_schema_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
		ScratchTable.execute(dataSource, "CREATE SCHEMA " + schema);
		try {
			JdbcLeaseStore store = new JdbcLeaseStore(dataSource, schema + ".leases");
			assertThatIllegalStateException().isThrownBy(store::verifyTable);
			store.createTableIfMissing();
			store.verifyTable();
			Lease lease = store.tryAcquire("orders", "a", LIVE, TIMEOUT).orElseThrow();
			assertThat(store.renew(lease, LIVE, TIMEOUT)).isPresent();
		}
		finally {
			ScratchTable.drop(dataSource, schema + ".leases");
			ScratchTable.execute(dataSource, "DROP SCHEMA " + schema);
		}
	}

	@ParameterizedTest
	@MethodSource("databases")
	void runsWholeLifecycle(Supplier<DataSource> database) {
		ScratchTable table = ScratchTable.create(database.get());
		try {
			JdbcLeaseStore store = table.store();
			Lease a = store.tryAcquire("orders", "a", LIVE, TIMEOUT).orElseThrow();
			assertThat(store.tryAcquire("orders", "b", LIVE, TIMEOUT)).isEmpty();
			assertThat(store.renew(a, LIVE, TIMEOUT)).isPresent();
			// Not the same duration again: two renewals within one millisecond change
			// nothing, which "affected rows" semantics count as 0.
			assertThat(store.renew(a, LIVE.plusSeconds(1), TIMEOUT)).isPresent();
			store.release(a, TIMEOUT);
			Lease b = store.tryAcquire("orders", "b", LIVE, TIMEOUT).orElseThrow();
			assertThat(b.activeIn()).isZero();
			store.forceLeader("orders", "c", TIMEOUT);
			store.forceLeader("orders", "c", TIMEOUT);
			assertThat(store.renew(b, LIVE, TIMEOUT)).isEmpty();
			Lease c = store.tryAcquire("orders", "c", LIVE, TIMEOUT).orElseThrow();
			assertThat(c.term()).isGreaterThan(b.term());
			assertThat(c.activeIn()).isPositive();
			store.clear("orders", TIMEOUT);
			assertThat(store.read("orders", TIMEOUT).orElseThrow().holder()).isNull();
			store.forceLeader("payments", "d", TIMEOUT);
			store.forceLeader("payments", "d", TIMEOUT);
			assertThat(store.tryAcquire("payments", "d", LIVE, TIMEOUT).orElseThrow().term()).isPositive();
		}
		finally {
			table.drop();
		}
	}

	@ParameterizedTest
	@MethodSource("databases")
	void leavesBorrowedConnectionAsItFoundIt(Supplier<DataSource> database) throws SQLException {
		DataSource pool = database.get();
		ScratchTable table = ScratchTable.create(pool);
		try (Connection connection = pool.getConnection()) {
			connection.setAutoCommit(false);
			int networkTimeout = connection.getNetworkTimeout();
			JdbcLeaseStore store = new JdbcLeaseStore(new SingleConnectionDataSource(connection, true), table.name());
			Lease lease = store.tryAcquire("orders", "a", LIVE, TIMEOUT).orElseThrow();
			assertThat(store.renew(lease, LIVE, TIMEOUT)).isPresent();
			store.forceLeader("payments", "b", TIMEOUT);
			assertThat(connection.getAutoCommit()).isFalse();
			assertThat(connection.getNetworkTimeout()).isEqualTo(networkTimeout);
			// Another connection sees the writes: they were committed, not left in an
			// open transaction.
			assertThat(table.store().read("orders", TIMEOUT).orElseThrow().holder()).isEqualTo("a");
			assertThat(table.store().read("payments", TIMEOUT).orElseThrow().holder()).isEqualTo("b");
			connection.rollback();
			assertThat(table.store().read("orders", TIMEOUT).orElseThrow().holder()).isEqualTo("a");
			connection.setAutoCommit(true);
		}
		finally {
			table.drop();
		}
	}

	@ParameterizedTest
	@MethodSource("databases")
	void databaseClockIsEpochMillisInAnySessionTimeZone(Supplier<DataSource> database) throws SQLException {
		HikariDataSource pool = (HikariDataSource) database.get();
		Connection connection = pool.getConnection();
		try (connection; Statement statement = connection.createStatement()) {
			String product = connection.getMetaData().getDatabaseProductName();
			SqlDialect dialect = SqlDialect.forProductName(product);
			long utc = nowMillis(statement, dialect);
			statement.execute((dialect == SqlDialect.MYSQL) ? "SET time_zone = '+05:30'" : "SET TIME ZONE '+05:30'");
			long shifted = nowMillis(statement, dialect);
			long jvm = System.currentTimeMillis();
			assertThat(shifted - utc).isBetween(0L, 60_000L);
			// Same host, or close enough: a time zone error is at least a quarter of an
			// hour.
			assertThat(shifted).isCloseTo(jvm, Offset.offset(600_000L));
		}
		finally {
			pool.evictConnection(connection);
		}
	}

	private static long nowMillis(Statement statement, SqlDialect dialect) throws SQLException {
		try (ResultSet rows = statement.executeQuery("SELECT " + dialect.nowMillis())) {
			assertThat(rows.next()).isTrue();
			return rows.getLong(1);
		}
	}

}
