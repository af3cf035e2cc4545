package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;

import javax.sql.DataSource;

import io.github.leaderelection.jdbc.LeaseSql.CandidateSql;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * Tests for the table of live candidates of {@link JdbcLeaseStore} on every database: its
 * name, the statements each call costs, the deletion of long-expired entries, and the
 * report of a missing table. The rules of the list itself are checked by the contract
 * tests.
 */
class JdbcLeaseStoreCandidateTests {

	private static final Duration LIVE = Duration.ofSeconds(30);

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	static Stream<Named<Supplier<DataSource>>> databases() {
		return JdbcLeaseStoreBatchTests.databases();
	}

	@Test
	void candidatesTableIsNamedAfterTheLeaseTableWithinTheLengthOfAnIdentifier() {
		assertThat(TableName.candidates("leader_election")).isEqualTo("leader_election_candidates");
		assertThat(TableName.candidates("app.Elections")).isEqualTo("app.Elections_candidates");
		String fits = "t".repeat(52);
		assertThat(TableName.candidates(fits)).isEqualTo(fits + "_candidates").hasSize(63);
		String longest = "s".repeat(63) + "." + "t".repeat(63);
		String candidates = TableName.candidates(longest);
		assertThat(candidates).startsWith("s".repeat(63) + ".ttt").endsWith("_candidates").hasSize(63 + 1 + 63);
		assertThat(TableName.requireValid(candidates)).isEqualTo(candidates);
		assertThat(TableName.candidates(longest.toUpperCase()).toLowerCase()).isEqualTo(candidates.toLowerCase());
		assertThat(TableName.candidates("t".repeat(62) + "u")).isNotEqualTo(TableName.candidates("t".repeat(63)));
		assertThat(TableName.candidates("t".repeat(53))).hasSize(63).isNotEqualTo("t".repeat(53) + "_candidates");
	}

	@ParameterizedTest
	@MethodSource("databases")
	void keepsCandidateAliveWithOneStatementWhereTheDatabaseCanWriteAndReadInOne(Supplier<DataSource> database)
			throws SQLException {
		ScratchTable table = ScratchTable.create(database.get());
		try {
			StatementCounter counter = new StatementCounter(table.dataSource());
			JdbcLeaseStore store = new JdbcLeaseStore(counter, table.name(), false);
			int expected = (dialect(table.dataSource()) == SqlDialect.MYSQL) ? 2 : 1;
			assertThat(store.keepCandidateAlive("a", 1, LIVE, TIMEOUT)).containsExactly(Map.entry("a", 1));
			assertThat(counter.takeCount()).as("statements to add a candidate").isEqualTo(expected);
			table.store().keepCandidateAlive("b", 2, LIVE, TIMEOUT);
			assertThat(store.keepCandidateAlive("a", 3, LIVE, TIMEOUT)).containsOnly(Map.entry("a", 3),
					Map.entry("b", 2));
			assertThat(counter.takeCount()).as("statements to keep a candidate alive").isEqualTo(expected);
			store.removeCandidate("a", TIMEOUT);
			assertThat(counter.takeCount()).as("statements to remove a candidate").isEqualTo(1);
			assertThat(table.store().keepCandidateAlive("b", 2, LIVE, TIMEOUT)).containsOnlyKeys("b");
		}
		finally {
			table.drop();
		}
	}

	/** The others see a kept entry with its new weight and end, not the old ones. */
	@ParameterizedTest
	@MethodSource("databases")
	void keepingAnEntryAliveSetsItsWeightAndEnd(Supplier<DataSource> database) {
		ScratchTable table = ScratchTable.create(database.get());
		try {
			JdbcLeaseStore store = table.store();
			JdbcLeaseStore other = table.store();
			store.keepCandidateAlive("a", 1, Duration.ofMillis(1), TIMEOUT);
			store.keepCandidateAlive("a", 2, LIVE, TIMEOUT);
			sleep(Duration.ofMillis(50));
			assertThat(other.keepCandidateAlive("b", 1, LIVE, TIMEOUT)).containsOnly(Map.entry("a", 2),
					Map.entry("b", 1));
			store.keepCandidateAlive("a", 3, Duration.ofMillis(1), TIMEOUT);
			sleep(Duration.ofMillis(50));
			assertThat(other.keepCandidateAlive("b", 1, LIVE, TIMEOUT)).containsOnlyKeys("b");
		}
		finally {
			table.drop();
		}
	}

	@ParameterizedTest
	@MethodSource("databases")
	void deletesEntriesThatRanOutLongAgoWithOneMoreStatement(Supplier<DataSource> database) throws SQLException {
		ScratchTable table = ScratchTable.create(database.get());
		try {
			StatementCounter counter = new StatementCounter(table.dataSource());
			JdbcLeaseStore store = new JdbcLeaseStore(counter, table.name(), false);
			int expected = (dialect(table.dataSource()) == SqlDialect.MYSQL) ? 2 : 1;
			String candidates = TableName.candidates(table.name());
			table.store().keepCandidateAlive("brief", 1, Duration.ofMillis(1), TIMEOUT);
			table.store().keepCandidateAlive("b", 1, LIVE, TIMEOUT);
			sleep(Duration.ofMillis(50));
			// Run out in 1970, and a moment ago: only the first is deleted.
			ScratchTable.execute(table.dataSource(),
					"INSERT INTO " + candidates + " (candidate_id, weight, alive_until_ms) VALUES ('gone', 1, 0)");
			counter.takeCount();
			assertThat(store.keepCandidateAlive("a", 1, LIVE, TIMEOUT)).containsOnlyKeys("a", "b");
			assertThat(counter.takeCount()).isEqualTo(expected + 1);
			assertThat(entries(table.dataSource(), candidates, "gone")).isZero();
			assertThat(entries(table.dataSource(), candidates, "brief")).isOne();
			assertThat(store.keepCandidateAlive("a", 1, LIVE, TIMEOUT)).containsOnlyKeys("a", "b");
			assertThat(counter.takeCount()).isEqualTo(expected);
		}
		finally {
			table.drop();
		}
	}

	/**
	 * An entry read as long gone may be kept alive again before it is deleted (its
	 * candidate came back): the delete judges it again, by the database clock.
	 */
	@ParameterizedTest
	@MethodSource("databases")
	void deletesOnlyEntriesThatStillRanOutLongAgo(Supplier<DataSource> database) throws SQLException {
		ScratchTable table = ScratchTable.create(database.get());
		try {
			String candidates = TableName.candidates(table.name());
			table.store().keepCandidateAlive("back", 1, LIVE, TIMEOUT);
			ScratchTable.execute(table.dataSource(),
					"INSERT INTO " + candidates + " (candidate_id, weight, alive_until_ms) VALUES ('gone', 1, 0)");
			CandidateSql sql = LeaseSql.of(dialect(table.dataSource()), table.name()).candidates();
			try (Connection connection = table.dataSource().getConnection()) {
				SqlRunner.update(connection, sql.removeExpired(2), TIMEOUT, "back", "gone",
						LiveCandidates.REMOVAL_DELAY.toMillis());
			}
			assertThat(entries(table.dataSource(), candidates, "back")).isOne();
			assertThat(entries(table.dataSource(), candidates, "gone")).isZero();
		}
		finally {
			table.drop();
		}
	}

	@ParameterizedTest
	@MethodSource("databases")
	void reportsMissingCandidatesTableWithItsStatementWhileTheLeaseTableServes(Supplier<DataSource> database) {
		DataSource dataSource = database.get();
		String name = ScratchTable.uniqueName();
		String candidates = TableName.candidates(name);
		// The lease table alone, as a user who manages the schema may have created it.
		ScratchTable.execute(dataSource, LeaseSql.ddl(name));
		try {
			JdbcLeaseStore store = new JdbcLeaseStore(dataSource, name, false);
			store.prepareTableOnFirstUse(false);
			assertThat(store.tryAcquire("orders", "a", LIVE, TIMEOUT)).isPresent();
			assertThatNoException().isThrownBy(store::verifyTable);
			String message = "The leader election candidates table " + candidates + ", which balancing needs, is "
					+ "missing";
			String create = "create it with:\n" + LeaseSql.candidatesDdl(candidates) + ";";
			assertThatIllegalStateException().isThrownBy(() -> store.keepCandidateAlive("a", 1, LIVE, TIMEOUT))
				.withMessageStartingWith(message)
				.withMessageEndingWith(create);
			assertThatIllegalStateException().isThrownBy(() -> store.removeCandidate("a", TIMEOUT))
				.withMessageStartingWith(message)
				.withMessageEndingWith(create);
			assertThat(store.ddl()).endsWith(LeaseSql.candidatesDdl(candidates));
			store.createTableIfMissing();
			assertThat(store.keepCandidateAlive("a", 1, LIVE, TIMEOUT)).containsOnlyKeys("a");
		}
		finally {
			ScratchTable.drop(dataSource, name);
		}
	}

	@ParameterizedTest
	@MethodSource("databases")
	void worksOnTheLongestTableName(Supplier<DataSource> database) {
		DataSource dataSource = database.get();
		String name = ScratchTable.uniqueName() + "_" + "x".repeat(29);
		assertThat(name).hasSize(63);
		try {
			JdbcLeaseStore store = new JdbcLeaseStore(dataSource, name, false);
			store.createTableIfMissing();
			store.verifyTable();
			assertThat(store.keepCandidateAlive("a", 1, LIVE, TIMEOUT)).containsOnlyKeys("a");
			assertThat(new JdbcLeaseStore(dataSource, name, false).keepCandidateAlive("b", 1, LIVE, TIMEOUT))
				.containsOnlyKeys("a", "b");
		}
		finally {
			ScratchTable.drop(dataSource, name);
		}
	}

	private static long entries(DataSource dataSource, String table, String candidate) throws SQLException {
		try (Connection connection = dataSource.getConnection();
				Statement statement = connection.createStatement();
				ResultSet rows = statement
					.executeQuery("SELECT COUNT(*) FROM " + table + " WHERE candidate_id = '" + candidate + "'")) {
			rows.next();
			return rows.getLong(1);
		}
	}

	private static SqlDialect dialect(DataSource dataSource) throws SQLException {
		try (Connection connection = dataSource.getConnection()) {
			return SqlDialect.forProductName(connection.getMetaData().getDatabaseProductName());
		}
	}

	private static void sleep(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
