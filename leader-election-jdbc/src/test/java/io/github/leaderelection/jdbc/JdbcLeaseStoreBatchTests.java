package io.github.leaderelection.jdbc;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.jdbc.BatchSql.Way;
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
 * Tests that {@link JdbcLeaseStore} takes, renews and reads many groups with as few
 * statements as each database allows, counting the statements that reach it, and that
 * each group still gets its own outcome; the rules each lease keeps are checked by the
 * contract tests.
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

	/** Far more groups than one list names, as a node with many groups has. */
	private static final int THOUSANDS = 2000;

	private static final int PER_LIST = BatchSql.MAX_GROUPS_PER_LIST;

	/** A server version without JSON_TABLE, for the real server to be taken for. */
	private static final String MARIADB_WITHOUT_JSON_TABLE = "10.5.27-MariaDB";

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

	/**
	 * Every database with the way its statements are expected to name many groups, and
	 * MariaDB or MySQL once more as a server without JSON_TABLE.
	 */
	static Stream<Named<Database>> ways() {
		return Stream.concat(
				databases().map(
						(database) -> Named.of(database.getName(),
								new Database(database.getPayload(), expectedWay(database.getName())))),
				Stream.of(
						Named
							.of("MySQL family as MariaDB 10.5",
									new Database(
											() -> new ReportedServerVersion(TestDatabases.mysqlFamily(),
													MARIADB_WITHOUT_JSON_TABLE),
											Way.LISTS)),
						Named.of("MySQL family as MariaDB 10.5, affected rows",
								new Database(() -> new ReportedServerVersion(
										TestDatabases.mysqlFamily(Map.of("useAffectedRows", "true")),
										MARIADB_WITHOUT_JSON_TABLE), Way.LISTS))));
	}

	static Stream<Named<Database>> waysOfOneStatement() {
		return ways().filter((database) -> database.getPayload().way() != Way.LISTS);
	}

	static Stream<Named<Database>> waysOfLists() {
		return ways().filter((database) -> database.getPayload().way() == Way.LISTS);
	}

	static Stream<Named<Supplier<DataSource>>> mysqlFamily() {
		return databases().filter((database) -> database.getName().startsWith("MySQL"));
	}

	/**
	 * Databases whose tables match names regardless of case, as MySQL's do by default.
	 */
	static Stream<Named<Supplier<DataSource>>> caseInsensitiveDatabases() {
		return Stream
			.of(mysqlFamily(),
					Stream.of(Named.<Supplier<DataSource>>of(
							"MySQL family as MariaDB 10.5",
							() -> new ReportedServerVersion(TestDatabases.mysqlFamily(), MARIADB_WITHOUT_JSON_TABLE))),
					Stream.of(Named.<Supplier<DataSource>>of("H2 ignoring case",
							() -> new DriverManagerDataSource(
									"jdbc:h2:mem:leader_election_ignorecase;IGNORECASE=TRUE;DB_CLOSE_DELAY=-1", "sa",
									""))))
			.flatMap((databases) -> databases);
	}

	@ParameterizedTest
	@MethodSource("ways")
	void takesRenewsAndReadsThousandsOfGroupsWithAsFewStatementsAsTheDatabaseAllows(Database database)
			throws SQLException {
		ScratchTable table = ScratchTable.create(database.dataSource().get());
		try {
			StatementCounter counter = new StatementCounter(table.dataSource());
			JdbcLeaseStore store = new JdbcLeaseStore(counter, table.name(), false);
			List<String> groups = newGroups(THOUSANDS);
			Map<String, Lease> taken = store.tryAcquireAll(groups, "a", LIVE, TIMEOUT);
			assertThat(taken).containsOnlyKeys(groups);
			taken.forEach((group, lease) -> {
				assertThat(lease.group()).isEqualTo(group);
				assertThat(lease.holder()).isEqualTo("a");
				assertThat(lease.term()).isPositive();
				assertThat(lease.activeIn()).isZero();
			});
			// The first call on MySQL and MariaDB also reads the types of the table's
			// columns, once.
			int columnTypes = (database.way() == Way.JSON_TABLE) ? 1 : 0;
			assertThat(counter.takeCount()).as("statements to take %d leases first", THOUSANDS)
				.isEqualTo(database.statementsToAcquire(THOUSANDS, table.dataSource()) + columnTypes);
			List<Lease> leases = List.copyOf(taken.values());
			assertThat(store.renewAll(leases, RENEWED, TIMEOUT).keySet()).containsExactlyInAnyOrderElementsOf(groups);
			assertThat(counter.takeCount()).as("statements to renew %d leases", THOUSANDS)
				.isEqualTo(database.statementsPerList(THOUSANDS));
			List<String> asked = new ArrayList<>(groups);
			asked.add(newGroup());
			Map<String, Lease> read = store.readAll(asked, TIMEOUT);
			assertThat(counter.takeCount()).as("statements to read %d groups", asked.size())
				.isEqualTo(database.statementsPerList(asked.size()));
			assertThat(read).containsOnlyKeys(groups);
			for (Lease lease : leases) {
				assertThat(read.get(lease.group()).holder()).isEqualTo("a");
				assertThat(read.get(lease.group()).term()).isEqualTo(lease.term());
				assertThat(read.get(lease.group()).expiresIn()).isGreaterThan(LIVE);
			}
			Map<String, Lease> retaken = store.tryAcquireAll(groups, "a", LIVE, TIMEOUT);
			// Once seen, groups are read first, to tell a row the database lost.
			assertThat(counter.takeCount()).as("statements to take %d leases again", THOUSANDS)
				.isEqualTo(database.statementsPerList(THOUSANDS)
						+ database.statementsToAcquire(THOUSANDS, table.dataSource()));
			assertThat(retaken).containsOnlyKeys(groups);
			for (Lease lease : leases) {
				assertThat(retaken.get(lease.group()).term()).isGreaterThan(lease.term());
			}
			assertThat(store.tryAcquireAll(List.of(), "a", LIVE, TIMEOUT)).isEmpty();
			assertThat(store.renewAll(List.of(), RENEWED, TIMEOUT).keySet()).isEmpty();
			assertThat(store.readAll(List.of(), TIMEOUT)).isEmpty();
			assertThat(store.renewAll(List.of(new Lease(newGroup(), null, 1, LIVE, Duration.ZERO)), RENEWED, TIMEOUT))
				.isEmpty();
			assertThat(counter.takeCount()).as("statements for nothing to do").isZero();
		}
		finally {
			table.drop();
		}
	}

	/**
	 * Each group of a batch is judged on its own, with one statement for all of them
	 * where the database allows it: never led, released, held by another, expired, forced
	 * to the candidate, and already the candidate's.
	 */
	@ParameterizedTest
	@MethodSource("waysOfOneStatement")
	void takesEveryKindOfLeaseInOneBatchWithTheStatementsOfOne(Database database) throws SQLException {
		ScratchTable table = ScratchTable.create(database.dataSource().get());
		try {
			StatementCounter counter = new StatementCounter(table.dataSource());
			JdbcLeaseStore store = new JdbcLeaseStore(counter, table.name(), false);
			JdbcLeaseStore others = table.store();
			String unknown = newGroup();
			String released = newGroup();
			String held = newGroup();
			String expired = newGroup();
			String forced = newGroup();
			String own = newGroup();
			others.release(others.tryAcquire(released, "b", LIVE, TIMEOUT).orElseThrow(), TIMEOUT);
			Lease heldLease = others.tryAcquire(held, "b", LIVE, TIMEOUT).orElseThrow();
			Lease expiredLease = others.tryAcquire(expired, "b", Duration.ZERO, TIMEOUT).orElseThrow();
			others.tryAcquire(forced, "b", LIVE, TIMEOUT).orElseThrow();
			others.forceLeader(forced, "a", TIMEOUT);
			Lease forcedLease = others.read(forced, TIMEOUT).orElseThrow();
			Lease ownLease = others.tryAcquire(own, "a", LIVE, TIMEOUT).orElseThrow();
			// The first batch call, on MySQL and MariaDB, also reads the column types.
			store.readAll(List.of(unknown), TIMEOUT);
			counter.takeCount();
			Map<String, Lease> taken = store.tryAcquireAll(List.of(unknown, released, held, expired, forced, own), "a",
					LIVE, TIMEOUT);
			assertThat(counter.takeCount()).isEqualTo(database.statementsToAcquire(6, table.dataSource()));
			assertThat(taken).containsOnlyKeys(unknown, released, expired, forced, own);
			assertThat(taken.get(unknown).term()).isPositive();
			assertThat(taken.get(expired).term()).isGreaterThan(expiredLease.term());
			assertThat(taken.get(expired).activeIn()).isZero();
			assertThat(taken.get(forced).term()).isGreaterThan(forcedLease.term());
			assertThat(taken.get(forced).activeIn()).isPositive().isLessThanOrEqualTo(forcedLease.expiresIn());
			assertThat(taken.get(own).term()).isGreaterThan(ownLease.term());
			Lease stillHeld = others.read(held, TIMEOUT).orElseThrow();
			assertThat(stillHeld.holder()).isEqualTo("b");
			assertThat(stillHeld.term()).isEqualTo(heldLease.term());
			taken.forEach((group, lease) -> {
				assertThat(lease.holder()).isEqualTo("a");
				assertThat(lease.expiresIn()).isPositive().isLessThanOrEqualTo(LIVE);
				assertThat(others.read(group, TIMEOUT).orElseThrow().term()).isEqualTo(lease.term());
			});
		}
		finally {
			table.drop();
		}
	}

	@ParameterizedTest
	@MethodSource("waysOfLists")
	void splitsOnlyPastTheGroupsOneListMayName(Database database) throws SQLException {
		ScratchTable table = ScratchTable.create(database.dataSource().get());
		try {
			StatementCounter counter = new StatementCounter(table.dataSource());
			JdbcLeaseStore store = new JdbcLeaseStore(counter, table.name(), false);
			List<String> groups = newGroups(PER_LIST + 1);
			List<String> most = groups.subList(0, PER_LIST);
			int oneList = database.statementsToAcquire(PER_LIST, table.dataSource());
			assertThat(store.tryAcquireAll(most, "a", LIVE, TIMEOUT)).hasSize(PER_LIST);
			assertThat(counter.takeCount()).isEqualTo(oneList);
			List<Lease> leases = List.copyOf(store.tryAcquireAll(groups, "a", LIVE, TIMEOUT).values());
			assertThat(leases).hasSize(PER_LIST + 1);
			assertThat(counter.takeCount()).isEqualTo(database.statementsPerList(PER_LIST) + 2 * oneList);
			assertThat(store.renewAll(leases.subList(0, PER_LIST), RENEWED, TIMEOUT).keySet()).hasSize(PER_LIST);
			assertThat(counter.takeCount()).isEqualTo(1);
			assertThat(store.readAll(most, TIMEOUT)).hasSize(PER_LIST);
			assertThat(counter.takeCount()).isEqualTo(1);
			assertThat(store.renewAll(leases, RENEWED.plusSeconds(1), TIMEOUT).keySet())
				.containsExactlyInAnyOrderElementsOf(groups);
			assertThat(counter.takeCount()).isEqualTo(2);
			assertThat(store.readAll(groups, TIMEOUT)).containsOnlyKeys(groups);
			assertThat(counter.takeCount()).isEqualTo(2);
		}
		finally {
			table.drop();
		}
	}

	@ParameterizedTest
	@MethodSource("ways")
	void findsWhichLeasesWereLostWithOneMoreStatementOnlyWhereTheDatabaseCannotSay(Database database)
			throws SQLException {
		ScratchTable table = ScratchTable.create(database.dataSource().get());
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
			assertThat(store.renewAll(leases, RENEWED, TIMEOUT).keySet()).containsExactlyInAnyOrderElementsOf(kept);
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
			assertThat(store.renewAll(leases, LIVE, TIMEOUT).keySet())
				.containsExactlyInAnyOrderElementsOf(groups(leases));
			assertThat(counter.takeCount()).isEqualTo(affectedRows ? 2 : 1);
			store.release(leases.get(0), TIMEOUT);
			counter.takeCount();
			assertThat(store.renewAll(leases, LIVE, TIMEOUT).keySet())
				.containsExactlyInAnyOrderElementsOf(groups(leases.subList(1, 3)));
			assertThat(counter.takeCount()).isEqualTo(2);
		}
		finally {
			pool.evictConnection(connection);
			table.drop();
		}
	}

	/**
	 * Where the table's collation equates names that differ, a group is taken, read and
	 * renewed under any name that {@link JdbcLeaseStore#tryAcquire},
	 * {@link JdbcLeaseStore#read} and {@link JdbcLeaseStore#renew} accept, and reported
	 * under the name it was asked for.
	 */
	@ParameterizedTest
	@MethodSource("caseInsensitiveDatabases")
	void takesReadsAndRenewsUnderTheNamesAskedForWhereTheDatabaseEquatesNames(Supplier<DataSource> database) {
		ScratchTable table = ScratchTable.create(database.get());
		try {
			JdbcLeaseStore store = table.store();
			String group = "Orders-" + UUID.randomUUID();
			String other = group.toUpperCase(Locale.ROOT);
			Lease lease = store.tryAcquire(group, "a", LIVE, TIMEOUT).orElseThrow();
			Lease sameRow = new Lease(other, "a", lease.term(), LIVE, Duration.ZERO);
			assertThat(store.read(other, TIMEOUT)).as("the database equates the names").isPresent();
			assertThat(store.renew(sameRow, RENEWED, TIMEOUT)).isPresent();
			Map<String, Lease> read = store.readAll(List.of(other, newGroup()), TIMEOUT);
			assertThat(read).containsOnlyKeys(other);
			assertThat(read.get(other).term()).isEqualTo(lease.term());
			assertThat(store.renewAll(List.of(sameRow), RENEWED, TIMEOUT).keySet()).containsExactly(other);
			String unknown = newGroup();
			Map<String, Lease> taken = store.tryAcquireAll(List.of(other, unknown), "a", LIVE, TIMEOUT);
			assertThat(taken).containsOnlyKeys(other, unknown);
			assertThat(taken.get(other).group()).isEqualTo(other);
			assertThat(taken.get(other).term()).isGreaterThan(lease.term());
			assertThat(store.read(group, TIMEOUT).orElseThrow().term()).isEqualTo(taken.get(other).term());
			assertThat(table.store().tryAcquireAll(List.of(other), "b", LIVE, TIMEOUT)).isEmpty();
		}
		finally {
			table.drop();
		}
	}

	@ParameterizedTest
	@MethodSource("ways")
	void takesRenewsAndReadsGroupsWhateverCharactersTheirNamesHold(Database database) {
		ScratchTable table = ScratchTable.create(database.dataSource().get());
		try {
			JdbcLeaseStore store = table.store();
			String suffix = UUID.randomUUID().toString();
			List<String> groups = List.of("quote\"]}, {\"g\": \"x-" + suffix, "back\\slash\\\\-" + suffix,
					"apostrophe'); DROP TABLE x; -- " + suffix, "tab\tand\u0001control-" + suffix,
					"JSON_TABLE(?, '$[*]') ?::text[] " + suffix, "été-組-🎉-" + suffix,
					("x".repeat(255) + suffix).substring(0, 255));
			String candidate = "c\"'\\-" + suffix;
			Map<String, Lease> taken = store.tryAcquireAll(groups, candidate, LIVE, TIMEOUT);
			assertThat(taken).containsOnlyKeys(groups);
			for (String group : groups) {
				Lease one = store.read(group, TIMEOUT).orElseThrow();
				assertThat(one.holder()).isEqualTo(candidate);
				assertThat(one.term()).isEqualTo(taken.get(group).term());
			}
			assertThat(store.renewAll(taken.values(), RENEWED, TIMEOUT).keySet())
				.containsExactlyInAnyOrderElementsOf(groups);
			Map<String, Lease> read = store.readAll(groups, TIMEOUT);
			assertThat(read).containsOnlyKeys(groups);
			read.values().forEach((lease) -> assertThat(lease.expiresIn()).isGreaterThan(LIVE));
			assertThat(store.tryAcquireAll(groups, "other", LIVE, TIMEOUT)).isEmpty();
		}
		finally {
			table.drop();
		}
	}

	/**
	 * MySQL and MariaDB cut a value too long for a column with a mere warning: a name too
	 * long for the table must still match no group, not the one named by its beginning.
	 */
	@ParameterizedTest
	@MethodSource("ways")
	void namesTooLongForTheTableMatchNoGroup(Database database) {
		ScratchTable table = ScratchTable.create(database.dataSource().get());
		try {
			JdbcLeaseStore store = table.store();
			String longest = (UUID.randomUUID() + "x".repeat(255)).substring(0, 255);
			Lease lease = store.tryAcquireAll(List.of(longest), "a", LIVE, TIMEOUT).get(longest);
			String tooLong = longest + "y";
			assertThat(store.read(tooLong, TIMEOUT)).isEmpty();
			assertThat(store.readAll(List.of(tooLong), TIMEOUT)).isEmpty();
			Lease alike = new Lease(tooLong, "a", lease.term(), LIVE, Duration.ZERO);
			assertThat(store.renewAll(List.of(alike), RENEWED, TIMEOUT).keySet()).isEmpty();
			assertThat(store.read(longest, TIMEOUT).orElseThrow().expiresIn()).isLessThanOrEqualTo(LIVE);
		}
		finally {
			table.drop();
		}
	}

	/**
	 * A node renewing leases that ran out while another takes them over, both on the same
	 * rows at once: each group goes to exactly one of them, and neither call fails. (That
	 * the rows are locked in one order is checked by {@link BatchLockOrderTests}.)
	 */
	@ParameterizedTest
	@MethodSource("waysOfOneStatement")
	void takeOversRacingRenewalsOfTheSameRowsLeaveOneWinnerPerGroup(Database database) throws Exception {
		ScratchTable table = ScratchTable.create(database.dataSource().get());
		ExecutorService executor = Executors.newFixedThreadPool(2);
		try {
			JdbcLeaseStore renewing = table.store();
			JdbcLeaseStore taking = table.store();
			for (int round = 0; round < 10; round++) {
				List<String> groups = newGroups(200);
				List<Lease> ranOut = new ArrayList<>(
						renewing.tryAcquireAll(groups, "a", Duration.ZERO, TIMEOUT).values());
				Collections.reverse(ranOut);
				List<String> shuffled = new ArrayList<>(groups);
				Collections.shuffle(shuffled);
				CountDownLatch start = new CountDownLatch(1);
				Future<Set<String>> renewed = executor.submit(() -> {
					start.await();
					return renewing.renewAll(ranOut, LIVE, TIMEOUT).keySet();
				});
				Future<Map<String, Lease>> taken = executor.submit(() -> {
					start.await();
					return taking.tryAcquireAll(shuffled, "b", LIVE, TIMEOUT);
				});
				start.countDown();
				Set<String> winners = new HashSet<>(renewed.get(30, TimeUnit.SECONDS));
				for (String group : taken.get(30, TimeUnit.SECONDS).keySet()) {
					assertThat(winners.add(group)).as("second winner of %s", group).isTrue();
				}
				assertThat(winners).containsExactlyInAnyOrderElementsOf(groups);
			}
		}
		finally {
			executor.shutdownNow();
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
		assertThatExceptionOfType(LeaderElectionException.class)
			.isThrownBy(() -> store.tryAcquireAll(List.of("orders", "payments"), "a", LIVE, TIMEOUT))
			.withMessageContaining("acquire the leases of 2 groups in table " + table);
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
			assertThatExceptionOfType(LeaderElectionException.class)
				.isThrownBy(() -> store.tryAcquireAll(groups(leases), "a", LIVE, Duration.ofNanos(1)))
				.withMessageContaining("timeout");
			assertThat(counter.takeCount()).isZero();
			Lease lease = store.read(leases.get(0).group(), TIMEOUT).orElseThrow();
			assertThat(lease.expiresIn()).isLessThanOrEqualTo(LIVE);
			assertThat(lease.term()).isEqualTo(leases.get(0).term());
		}
		finally {
			table.drop();
		}
	}

	/** Takes leases of new groups for candidate "a", with one batch. */
	private static List<Lease> acquire(JdbcLeaseStore store, int count) {
		List<String> groups = newGroups(count);
		Map<String, Lease> taken = store.tryAcquireAll(groups, "a", LIVE, TIMEOUT);
		assertThat(taken).containsOnlyKeys(groups);
		return List.copyOf(taken.values());
	}

	private static List<String> groups(List<Lease> leases) {
		return leases.stream().map(Lease::group).toList();
	}

	private static SqlDialect dialect(DataSource dataSource) throws SQLException {
		try (Connection connection = dataSource.getConnection()) {
			return SqlDialect.forProductName(connection.getMetaData().getDatabaseProductName());
		}
	}

	private static Way expectedWay(String databaseName) {
		if (databaseName.startsWith("PostgreSQL")) {
			return Way.ARRAYS;
		}
		return databaseName.startsWith("MySQL") ? Way.JSON_TABLE : Way.LISTS;
	}

	private static List<String> newGroups(int count) {
		List<String> groups = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			groups.add(newGroup());
		}
		return groups;
	}

	private static String newGroup() {
		return "group-" + UUID.randomUUID();
	}

	/**
	 * A database, and how its statements are expected to name many groups.
	 */
	record Database(Supplier<DataSource> dataSource, Way way) {

		/** Statements per call that names groups in lists, one per list. */
		int statementsPerList(int groups) {
			return (this.way != Way.LISTS) ? 1 : (groups + PER_LIST - 1) / PER_LIST;
		}

		/**
		 * Statements to take leases that the store has not seen: one that takes and
		 * returns them on PostgreSQL and H2; on MySQL and MariaDB one that takes them,
		 * then one that reads them.
		 */
		int statementsToAcquire(int groups, DataSource dataSource) throws SQLException {
			return statementsPerList(groups) * ((dialect(dataSource) == SqlDialect.MYSQL) ? 2 : 1);
		}

	}

}
