package io.github.leaderelection.jdbc;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.stream.Stream;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.testing.TestDatabases;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests that {@link JdbcLeaseStore} renews and reads many groups with one statement each
 * on every database, counting the statements that reach it; the rules each lease keeps
 * are checked by the contract tests.
 */
class JdbcLeaseStoreBatchTests {

	private static final Duration LIVE = Duration.ofSeconds(30);

	/**
	 * Unlike {@link #LIVE}, moves the lease end even within the millisecond of a grant,
	 * and by enough to tell a renewed lease from one that was not.
	 */
	private static final Duration RENEWED = LIVE.plusSeconds(10);

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final int MANY = 300;

	private static final int PER_STATEMENT = LeaseSql.MAX_GROUPS_PER_STATEMENT;

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

	static Stream<Named<Supplier<DataSource>>> mysqlFamily() {
		return databases().filter((database) -> database.getName().startsWith("MySQL"));
	}

	/**
	 * Databases whose tables match names regardless of case, as MySQL's do by default.
	 */
	static Stream<Named<Supplier<DataSource>>> caseInsensitiveDatabases() {
		return Stream.concat(mysqlFamily(),
				Stream.of(Named.of("H2 ignoring case",
						() -> new DriverManagerDataSource(
								"jdbc:h2:mem:leader_election_ignorecase;IGNORECASE=TRUE;DB_CLOSE_DELAY=-1", "sa",
								""))));
	}

	@ParameterizedTest
	@MethodSource("databases")
	void renewsAndReadsManyGroupsWithOneStatementEach(Supplier<DataSource> database) {
		ScratchTable table = ScratchTable.create(database.get());
		try {
			StatementCounter counter = new StatementCounter(table.dataSource());
			JdbcLeaseStore store = new JdbcLeaseStore(counter, table.name(), false);
			List<Lease> leases = acquire(store, MANY);
			counter.takeCount();
			assertThat(store.renewAll(leases, RENEWED, TIMEOUT)).containsExactlyInAnyOrderElementsOf(groups(leases));
			assertThat(counter.takeCount()).as("statements to renew %d leases", MANY).isEqualTo(1);
			List<String> asked = new ArrayList<>(groups(leases));
			asked.add(newGroup());
			Map<String, Lease> read = store.readAll(asked, TIMEOUT);
			assertThat(counter.takeCount()).as("statements to read %d groups", asked.size()).isEqualTo(1);
			assertThat(read).containsOnlyKeys(groups(leases));
			for (Lease lease : leases) {
				assertThat(read.get(lease.group()).holder()).isEqualTo("a");
				assertThat(read.get(lease.group()).term()).isEqualTo(lease.term());
				assertThat(read.get(lease.group()).expiresIn()).isGreaterThan(LIVE);
			}
			assertThat(store.renewAll(List.of(), RENEWED, TIMEOUT)).isEmpty();
			assertThat(store.readAll(List.of(), TIMEOUT)).isEmpty();
			assertThat(store.renewAll(List.of(new Lease(newGroup(), null, 1, LIVE, Duration.ZERO)), RENEWED, TIMEOUT))
				.isEmpty();
			assertThat(counter.takeCount()).as("statements for nothing to do").isZero();
		}
		finally {
			table.drop();
		}
	}

	@ParameterizedTest
	@MethodSource("databases")
	void splitsOnlyPastTheGroupsOneStatementMayName(Supplier<DataSource> database) {
		ScratchTable table = ScratchTable.create(database.get());
		try {
			StatementCounter counter = new StatementCounter(table.dataSource());
			JdbcLeaseStore store = new JdbcLeaseStore(counter, table.name(), false);
			List<Lease> leases = acquire(store, PER_STATEMENT + 1);
			List<Lease> most = leases.subList(0, PER_STATEMENT);
			counter.takeCount();
			assertThat(store.renewAll(most, RENEWED, TIMEOUT)).hasSize(PER_STATEMENT);
			assertThat(counter.takeCount()).isEqualTo(1);
			assertThat(store.readAll(groups(most), TIMEOUT)).hasSize(PER_STATEMENT);
			assertThat(counter.takeCount()).isEqualTo(1);
			assertThat(store.renewAll(leases, RENEWED.plusSeconds(1), TIMEOUT))
				.containsExactlyInAnyOrderElementsOf(groups(leases));
			assertThat(counter.takeCount()).isEqualTo(2);
			assertThat(store.readAll(groups(leases), TIMEOUT)).containsOnlyKeys(groups(leases));
			assertThat(counter.takeCount()).isEqualTo(2);
		}
		finally {
			table.drop();
		}
	}

	@ParameterizedTest
	@MethodSource("databases")
	void findsWhichLeasesWereLostWithOneMoreStatementOnlyWhereTheDatabaseCannotSay(Supplier<DataSource> database)
			throws SQLException {
		ScratchTable table = ScratchTable.create(database.get());
		try {
			StatementCounter counter = new StatementCounter(table.dataSource());
			JdbcLeaseStore store = new JdbcLeaseStore(counter, table.name(), false);
			List<Lease> leases = acquire(store, MANY);
			Lease released = leases.get(0);
			Lease forced = leases.get(1);
			Lease cleared = leases.get(2);
			store.release(released, TIMEOUT);
			table.store().forceLeader(forced.group(), "b", TIMEOUT);
			table.store().clear(cleared.group(), TIMEOUT);
			List<String> kept = groups(leases.subList(3, MANY));
			counter.takeCount();
			assertThat(store.renewAll(leases, RENEWED, TIMEOUT)).containsExactlyInAnyOrderElementsOf(kept);
			assertThat(counter.takeCount()).isEqualTo((dialect(table.dataSource()) == SqlDialect.MYSQL) ? 2 : 1);
			Map<String, Lease> read = store.readAll(groups(leases), TIMEOUT);
			assertThat(read.get(released.group()).holder()).isNull();
			assertThat(read.get(forced.group()).holder()).isEqualTo("b");
			assertThat(read.get(cleared.group()).holder()).isNull();
			assertThat(read.get(kept.get(0)).expiresIn()).isGreaterThan(LIVE);
		}
		finally {
			table.drop();
		}
	}

	/**
	 * With the session clock held still, a renewal sets the end the lease already has:
	 * "affected rows" semantics count such a row as 0, and the store must read back
	 * whether the lease still had its holder and term.
	 */
	@ParameterizedTest
	@MethodSource("mysqlFamily")
	void renewalThatSetsTheEndTheLeaseHasStillRenews(Supplier<DataSource> database) throws SQLException {
		HikariDataSource pool = (HikariDataSource) database.get();
		ScratchTable table = ScratchTable.create(pool);
		Connection connection = pool.getConnection();
		try (Statement session = connection.createStatement()) {
			boolean affectedRows = "true".equals(pool.getDataSourceProperties().get("useAffectedRows"));
			session.execute("SET timestamp = " + BigDecimal.valueOf(System.currentTimeMillis(), 3).toPlainString());
			StatementCounter counter = new StatementCounter(new SingleConnectionDataSource(connection, true));
			JdbcLeaseStore store = new JdbcLeaseStore(counter, table.name(), false);
			List<Lease> leases = acquire(store, 3);
			counter.takeCount();
			assertThat(store.renewAll(leases, LIVE, TIMEOUT)).containsExactlyInAnyOrderElementsOf(groups(leases));
			assertThat(counter.takeCount()).isEqualTo(affectedRows ? 2 : 1);
			store.release(leases.get(0), TIMEOUT);
			counter.takeCount();
			assertThat(store.renewAll(leases, LIVE, TIMEOUT))
				.containsExactlyInAnyOrderElementsOf(groups(leases.subList(1, 3)));
			assertThat(counter.takeCount()).isEqualTo(2);
		}
		finally {
			pool.evictConnection(connection);
			table.drop();
		}
	}

	/**
	 * Where the table's collation equates names that differ, a group is read and renewed
	 * under any name that {@link JdbcLeaseStore#read} and {@link JdbcLeaseStore#renew}
	 * accept, and reported under the name it was asked for.
	 */
	@ParameterizedTest
	@MethodSource("caseInsensitiveDatabases")
	void readsAndRenewsUnderTheNamesAskedForWhereTheDatabaseEquatesNames(Supplier<DataSource> database) {
		ScratchTable table = ScratchTable.create(database.get());
		try {
			JdbcLeaseStore store = table.store();
			String group = "Orders-" + UUID.randomUUID();
			String other = group.toUpperCase(Locale.ROOT);
			Lease lease = store.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
			Lease sameRow = new Lease(other, "a", lease.term(), LIVE, Duration.ZERO);
			assertThat(store.read(other, TIMEOUT)).as("the database equates the names").isPresent();
			assertThat(store.renew(sameRow, RENEWED, TIMEOUT)).isTrue();
			Map<String, Lease> read = store.readAll(List.of(other, newGroup()), TIMEOUT);
			assertThat(read).containsOnlyKeys(other);
			assertThat(read.get(other).term()).isEqualTo(lease.term());
			assertThat(store.renewAll(List.of(sameRow), RENEWED, TIMEOUT)).containsExactly(other);
		}
		finally {
			table.drop();
		}
	}

	@Test
	void failsNamingTheNumberOfGroupsAndTheTable() {
		String table = ScratchTable.uniqueName();
		JdbcLeaseStore store = new JdbcLeaseStore(TestDatabases.h2(), table);
		List<Lease> leases = List.of(new Lease("orders", "a", 1, LIVE, Duration.ZERO),
				new Lease("payments", "a", 1, LIVE, Duration.ZERO));
		assertThatExceptionOfType(LeaderElectionException.class).isThrownBy(() -> store.renewAll(leases, LIVE, TIMEOUT))
			.withMessageContaining("renew the leases of 2 groups in table " + table);
		assertThatExceptionOfType(LeaderElectionException.class)
			.isThrownBy(() -> store.readAll(List.of("orders", "payments"), TIMEOUT))
			.withMessageContaining("read the leases of 2 groups in table " + table);
	}

	@Test
	void runsNoStatementOnceTheCallTimeoutHasPassed() {
		ScratchTable table = ScratchTable.create(TestDatabases.h2());
		try {
			StatementCounter counter = new StatementCounter(table.dataSource());
			JdbcLeaseStore store = new JdbcLeaseStore(counter, table.name(), false);
			List<Lease> leases = acquire(store, 2);
			counter.takeCount();
			assertThatExceptionOfType(LeaderElectionException.class)
				.isThrownBy(() -> store.renewAll(leases, RENEWED, Duration.ofNanos(1)))
				.withMessageContaining("timeout");
			assertThatExceptionOfType(LeaderElectionException.class)
				.isThrownBy(() -> store.readAll(groups(leases), Duration.ofNanos(1)))
				.withMessageContaining("timeout");
			assertThat(counter.takeCount()).isZero();
			assertThat(store.read(leases.get(0).group(), TIMEOUT).orElseThrow().expiresIn()).isLessThanOrEqualTo(LIVE);
		}
		finally {
			table.drop();
		}
	}

	private static List<Lease> acquire(JdbcLeaseStore store, int count) {
		List<Lease> leases = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			leases.add(store.tryAcquire(newGroup(), "a", LIVE, TIMEOUT).orElseThrow());
		}
		return leases;
	}

	private static List<String> groups(List<Lease> leases) {
		return leases.stream().map(Lease::group).toList();
	}

	private static SqlDialect dialect(DataSource dataSource) throws SQLException {
		try (Connection connection = dataSource.getConnection()) {
			return SqlDialect.forProductName(connection.getMetaData().getDatabaseProductName());
		}
	}

	private static String newGroup() {
		return "group-" + UUID.randomUUID();
	}

}
