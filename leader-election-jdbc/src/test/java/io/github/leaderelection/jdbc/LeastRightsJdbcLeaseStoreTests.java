package io.github.leaderelection.jdbc;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;

import javax.sql.DataSource;

import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.testing.TestDatabases;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A database user with exactly the grants that docs/security.md lists, read from the
 * page, runs every operation of the store on tables that another user created.
 */
class LeastRightsJdbcLeaseStoreTests {

	private static final Duration LEASE = Duration.ofSeconds(15);

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	@Test
	void runsWithTheGrantsOfTheSecurityPageOnPostgres() throws Exception {
		String suffix = suffix();
		String user = "elector_" + suffix;
		runWithGrants(TestDatabases.postgres(), suffix, List.of("CREATE ROLE " + user + " LOGIN PASSWORD 'secret'"),
				(grant) -> grant.replace(" elector;", " " + user + ";"), "DROP OWNED BY " + user, "DROP ROLE " + user,
				user);
	}

	@Test
	void runsWithTheGrantsOfTheSecurityPageOnMariaDb() throws Exception {
		String suffix = suffix();
		String user = "elector_" + suffix;
		runWithGrants(TestDatabases.mysqlFamily(), suffix,
				List.of("CREATE USER '" + user + "'@'%' IDENTIFIED BY 'secret'",
						"CREATE USER '" + user + "'@'localhost' IDENTIFIED BY 'secret'"),
				(grant) -> grant.replace(" elector;", " '" + user + "'@'%';") + "\n"
						+ grant.replace(" elector;", " '" + user + "'@'localhost';"),
				"DROP USER '" + user + "'@'%'", "DROP USER '" + user + "'@'localhost'", user);
	}

	private void runWithGrants(DataSource admin, String suffix, List<String> createUser,
			Function<String, String> grantsToUser, String dropGrants, String dropUser, String user) throws Exception {
		String table = "least_rights_" + suffix;
		JdbcLeaseStore owner = new JdbcLeaseStore(admin, table, false);
		owner.createTableIfMissing();
		String url;
		try (Connection connection = admin.getConnection()) {
			url = connection.getMetaData().getURL();
		}
		// Without the settings, which may name the administrator.
		url = (url.indexOf('?') >= 0) ? url.substring(0, url.indexOf('?')) : url;
		try {
			execute(admin, createUser);
			execute(admin, List.of(grantsToUser.apply(grants()).replace("leader_election", table).split(";\n?")));
			DriverManagerDataSource elector = new DriverManagerDataSource(url, user, "secret");
			try (JdbcLeaseStore store = new JdbcLeaseStore(elector, table, true)) {
				exercise(store);
			}
		}
		finally {
			executeQuietly(admin, dropGrants);
			executeQuietly(admin, dropUser);
			executeQuietly(admin, "DROP TABLE " + table);
			executeQuietly(admin, "DROP TABLE " + table + "_candidates");
			executeQuietly(admin, "DROP TABLE " + table + "_runs");
		}
	}

	private static void exercise(JdbcLeaseStore store) throws Exception {
		store.verifyTable();
		Lease lease = store.tryAcquire("orders", "a", LEASE, TIMEOUT).orElseThrow();
		assertThat(store.renew(lease, LEASE, TIMEOUT)).isPresent();
		assertThat(store.read("orders", TIMEOUT))
			.hasValueSatisfying((read) -> assertThat(read.holder()).isEqualTo("a"));
		assertThat(store.tryAcquireAll(Set.of("billing", "shipping"), "a", LEASE, TIMEOUT)).hasSize(2);
		assertThat(
				store.renewAll(store.readAll(Set.of("billing", "shipping"), TIMEOUT).values(), LEASE, TIMEOUT).keySet())
			.hasSize(2);
		try (AutoCloseable watch = store.watch("orders", () -> {
		})) {
			store.release(lease, TIMEOUT);
		}
		Lease billing = store.read("billing", TIMEOUT).orElseThrow();
		RunRecord run = new RunRecord("billing", "report", 1_000, "a", billing.term(), Instant.ofEpochMilli(1_000),
				null, RunOutcome.RUNNING);
		assertThat(store.claimRun(billing, run, Duration.ZERO, TIMEOUT)).isTrue();
		assertThat(store.finishRun(run.endedAs(RunOutcome.SUCCEEDED, Instant.ofEpochMilli(2_000)), TIMEOUT)).isTrue();
		assertThat(store.lastRun("billing", "report", TIMEOUT)).isPresent();
		assertThat(store.runs("billing", TIMEOUT)).extracting(RunRecord::job).containsExactly("report");
		store.forceLeader("billing", "b", TIMEOUT);
		store.clear("shipping", TIMEOUT);
		assertThat(store.keepCandidateAlive("a", 1, LEASE, TIMEOUT)).containsKey("a");
		store.removeCandidate("a", TIMEOUT);
	}

	/** The GRANT statements of docs/security.md, separated by semicolons. */
	private static String grants() throws IOException {
		String page = Files.readString(Path.of("../docs/security.md"));
		int start = page.indexOf("```sql\nGRANT ");
		assertThat(start).as("a sql block of GRANT statements in docs/security.md").isNotNegative();
		return page.substring(start + "```sql\n".length(), page.indexOf("```", start + 1)).strip();
	}

	private static String suffix() {
		return UUID.randomUUID().toString().replace("-", "").substring(0, 10);
	}

	private static void execute(DataSource dataSource, List<String> statements) throws SQLException {
		try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
			for (String sql : statements) {
				if (!sql.isBlank()) {
					statement.execute(sql.strip());
				}
			}
		}
	}

	private static void executeQuietly(DataSource dataSource, String sql) {
		try {
			execute(dataSource, List.of(sql));
		}
		catch (SQLException ex) {
			// Cleanup of what the test may not have got to create.
		}
	}

}
