package io.github.leaderelection.autoconfigure;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.sql.DataSource;

import io.github.leaderelection.testing.ApplicationReady;
import io.github.leaderelection.testing.TestDatabases;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.OnlyOnLeader;
import io.github.leaderelection.actuate.LeaderElectionHealthIndicator;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.jdbc.JdbcLeaseStore;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import org.apache.derby.jdbc.EmbeddedDataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.h2.tools.Server;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceInitializationAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import static io.github.leaderelection.autoconfigure.LeaderElectionAutoConfigurationTests.analyze;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link JdbcBackendConfiguration}.
 */
@ExtendWith(OutputCaptureExtension.class)
class JdbcBackendConfigurationTests {

	private static final String ALLOW_IN_MEMORY_DATABASE = "leader-election.jdbc.allow-in-memory-database";

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	// Most tests elect through an in-memory database of their own, which applications may
	// not.
	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(DataSourceAutoConfiguration.class, LeaderElectionAutoConfiguration.class))
		.withPropertyValues(ALLOW_IN_MEMORY_DATABASE + "=true");

	@TempDir
	Path directory;

	@Test
	void electsThroughApplicationDataSourceWhenDetected() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(JdbcLeaseStore.class);
			assertThat(context.getBean(LeaderElectionEngine.class).store())
				.isSameAs(context.getBean(JdbcLeaseStore.class));
		});
	}

	@Test
	void electsThroughDataSourceWhenSelected() {
		this.contextRunner.withPropertyValues("leader-election.backend=jdbc")
			.run((context) -> assertThat(context).hasSingleBean(JdbcLeaseStore.class));
	}

	@Test
	void ignoresDataSourceWhenInMemoryIsSelected() {
		this.contextRunner.withPropertyValues("leader-election.backend=in-memory")
			.run((context) -> assertThat(context).hasSingleBean(InMemoryLeaseStore.class)
				.doesNotHaveBean(JdbcLeaseStore.class));
	}

	@Test
	void backsOffWhenUserDefinesLeaseStore() {
		this.contextRunner.withBean("userLeaseStore", InMemoryLeaseStore.class, InMemoryLeaseStore::new)
			.run((context) -> {
				assertThat(context).hasSingleBean(LeaseStore.class).doesNotHaveBean(JdbcLeaseStore.class);
				assertThat(context.getBean(LeaderElectionEngine.class).store())
					.isSameAs(context.getBean("userLeaseStore"));
			});
	}

	@Test
	void createsTableInEmbeddedDatabaseByDefault() {
		this.contextRunner.run((context) -> assertThatNoException()
			.isThrownBy(() -> new JdbcLeaseStore(context.getBean(DataSource.class)).verifyTable()));
	}

	@Test
	void createsTableWithConfiguredName() {
		this.contextRunner.withPropertyValues("leader-election.jdbc.table-name=app_leases").run((context) -> {
			DataSource dataSource = context.getBean(DataSource.class);
			assertThatNoException().isThrownBy(() -> new JdbcLeaseStore(dataSource, "app_leases").verifyTable());
			assertThatIllegalStateException().isThrownBy(() -> new JdbcLeaseStore(dataSource).verifyTable());
		});
	}

	@Test
	void failsWithStatementToRunWhenTableIsMissingAndInitializationIsNever() {
		this.contextRunner.withPropertyValues("leader-election.jdbc.initialize-schema=never").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).contains("The leader election table leader_election is missing")
				.contains("CREATE TABLE IF NOT EXISTS leader_election (")
				.contains("leader-election.jdbc.initialize-schema is 'never'");
			assertThat(analysis.getAction()).contains("leader-election.jdbc.initialize-schema=always");
		});
	}

	@Test
	void checksTableInDatabaseThatIsNotEmbeddedByDefault() {
		this.contextRunner.withPropertyValues("spring.datasource.url=" + fileDatabaseUrl()).run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).contains("CREATE TABLE IF NOT EXISTS leader_election (")
				.contains("is 'embedded' and the database is not embedded");
		});
	}

	@Test
	void createsTableInDatabaseThatIsNotEmbeddedWhenInitializationIsAlways() {
		this.contextRunner
			.withPropertyValues("spring.datasource.url=" + fileDatabaseUrl(),
					"leader-election.jdbc.initialize-schema=always")
			.run((context) -> assertThatNoException()
				.isThrownBy(() -> new JdbcLeaseStore(context.getBean(DataSource.class)).verifyTable()));
	}

	@Test
	void startsWhenTableExistsAndInitializationIsNever() {
		String url = fileDatabaseUrl();
		new JdbcLeaseStore(h2(url)).createTableIfMissing();
		this.contextRunner
			.withPropertyValues("spring.datasource.url=" + url, "leader-election.jdbc.initialize-schema=never")
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(JdbcLeaseStore.class));
	}

	@Test
	void failsStartupWithTheStatementToRunWhenTheRunRecordsTableIsMissingAndAMethodIsScheduled() throws Exception {
		String url = fileDatabaseUrl();
		DataSource dataSource = h2(url);
		new JdbcLeaseStore(dataSource).createTableIfMissing();
		try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
			statement.execute("DROP TABLE leader_election_runs");
		}
		this.contextRunner.withConfiguration(AutoConfigurations.of(TaskSchedulingAutoConfiguration.class))
			.withUserConfiguration(ScheduledReport.class)
			.withPropertyValues("spring.datasource.url=" + url, "leader-election.jdbc.initialize-schema=never")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure())
					.hasMessageContaining("Cannot record the runs of Report.nightly()")
					.hasMessageContaining("The table of run records leader_election_runs is missing")
					.hasMessageContaining("CREATE TABLE IF NOT EXISTS leader_election_runs (")
					.hasMessageContaining("leader-election.jobs.run-records=false");
			});
		this.contextRunner.withConfiguration(AutoConfigurations.of(TaskSchedulingAutoConfiguration.class))
			.withUserConfiguration(ScheduledReport.class)
			.withPropertyValues("spring.datasource.url=" + url, "leader-election.jdbc.initialize-schema=never",
					"leader-election.jobs.run-records=false")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	static class ScheduledReport {

		@Bean
		Report report() {
			return new Report();
		}

	}

	public static class Report {

		@OnlyOnLeader
		@Scheduled(cron = "0 0 2 * * *")
		public void nightly() {
		}

	}

	@Test
	void checksTableAfterDatabaseInitializersRan() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(DataSourceInitializationAutoConfiguration.class))
			.withPropertyValues("spring.sql.init.mode=always",
					"spring.sql.init.schema-locations=classpath:io/github/leaderelection/autoconfigure/schema.sql",
					"leader-election.jdbc.table-name=migrated_leases", "leader-election.jdbc.initialize-schema=never")
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(JdbcLeaseStore.class));
	}

	@Test
	void usesDataSourceMarkedWithQualifierAmongSeveral() {
		this.contextRunner.withUserConfiguration(QualifiedDataSourceConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(JdbcLeaseStore.class);
			assertThatNoException()
				.isThrownBy(() -> new JdbcLeaseStore(context.getBean("leaderElectionDataSource", DataSource.class))
					.verifyTable());
			assertThatIllegalStateException().isThrownBy(
					() -> new JdbcLeaseStore(context.getBean("mainDataSource", DataSource.class)).verifyTable());
		});
	}

	@Test
	void usesPrimaryDataSourceAmongSeveral() {
		this.contextRunner.withUserConfiguration(PrimaryDataSourceConfiguration.class).run((context) -> {
			assertThatNoException().isThrownBy(
					() -> new JdbcLeaseStore(context.getBean("mainDataSource", DataSource.class)).verifyTable());
			assertThatIllegalStateException().isThrownBy(
					() -> new JdbcLeaseStore(context.getBean("otherDataSource", DataSource.class)).verifyTable());
		});
	}

	@Test
	void failsWithClearMessageWhenSeveralDataSourcesAndNoneIsMarked() {
		this.contextRunner.withUserConfiguration(TwoDataSourcesConfiguration.class).run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).contains("cannot choose among the DataSource beans")
				.contains("mainDataSource")
				.contains("otherDataSource");
			assertThat(analysis.getAction()).startsWith(
					"Mark the DataSource that holds the lease table with " + "@LeaderElectionDataSource (or @Primary)");
		});
	}

	@Test
	void failsWithClearMessageWhenTableNameIsUnsafe() {
		this.contextRunner.withPropertyValues("leader-election.jdbc.table-name=leases; DROP TABLE users")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription())
					.startsWith("Invalid value 'leases; DROP TABLE users' for leader-election.jdbc.table-name");
				assertThat(analysis.getAction()).startsWith(
						"Set leader-election.jdbc.table-name to a table name of " + "letters, digits and underscores");
			});
	}

	@Test
	void failsWithClearMessageWhenTableNameIsReservedWord() {
		this.contextRunner.withPropertyValues("leader-election.jdbc.table-name=order").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription())
				.isEqualTo("Invalid value 'order' for leader-election.jdbc.table-name: "
						+ "Invalid table name 'order': 'order' is a reserved word in SQL, which the database refuses as a "
						+ "name");
			assertThat(analysis.getAction()).startsWith("Set leader-election.jdbc.table-name to a table name of "
					+ "letters, digits and underscores that is not a reserved word of the database");
		});
		this.contextRunner.withPropertyValues("leader-election.jdbc.table-name=select.leader_election")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("'select' is a reserved word in SQL"));
		// PostgreSQL would read it as the function, and blame missing columns.
		this.contextRunner.withPropertyValues("leader-election.jdbc.table-name=USER")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("'USER' is a reserved word in SQL"));
	}

	@Test
	void failsNamingTheTableNamePropertyWhenH2RefusesTheName() {
		// VALUE is reserved by H2, but not by MySQL or PostgreSQL.
		this.contextRunner.withPropertyValues("leader-election.jdbc.table-name=value")
			.run((context) -> assertRefusedTableName(analyze(context), "value"));
	}

	@Test
	void failsNamingTheTableNamePropertyWhenMariaDbRefusesTheName() {
		// KEY is reserved by MySQL and MariaDB, but not by PostgreSQL.
		for (String mode : new String[] { "always", "never" }) {
			this.contextRunner.withBean(DataSource.class, () -> new DelegatingDataSource(TestDatabases.mysqlFamily()))
				.withPropertyValues("leader-election.jdbc.table-name=key",
						"leader-election.jdbc.initialize-schema=" + mode)
				.run((context) -> assertRefusedTableName(analyze(context), "key"));
		}
	}

	@Test
	void failsNamingTheTableNamePropertyWhenPostgresRefusesTheName() {
		// PLACING is reserved by PostgreSQL, but not by MySQL or H2.
		for (String mode : new String[] { "always", "never" }) {
			this.contextRunner.withBean(DataSource.class, () -> new DelegatingDataSource(TestDatabases.postgres()))
				.withPropertyValues("leader-election.jdbc.table-name=placing",
						"leader-election.jdbc.initialize-schema=" + mode)
				.run((context) -> assertRefusedTableName(analyze(context), "placing"));
		}
	}

	private static void assertRefusedTableName(FailureAnalysis analysis, String name) {
		assertThat(analysis.getDescription())
			.startsWith("Invalid value '" + name
					+ "' for leader-election.jdbc.table-name: The database refuses the table name '" + name
					+ "' as a syntax error (")
			.contains("it is likely a word that this database reserves")
			.doesNotContain("initialize-schema");
		assertThat(analysis.getAction())
			.startsWith("Set leader-election.jdbc.table-name to a table name of "
					+ "letters, digits and underscores that is not a reserved word of the database")
			.doesNotContain("may create")
			.doesNotContain("may read");
	}

	@Test
	void failsWithClearMessageWhenInitializationModeIsUnknown() {
		this.contextRunner.withPropertyValues("leader-election.jdbc.initialize-schema=sometimes").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription())
				.startsWith("Invalid value 'sometimes' for leader-election.jdbc.initialize-schema");
			assertThat(analysis.getAction())
				.isEqualTo("Set leader-election.jdbc.initialize-schema to one of: always, embedded, never.");
		});
	}

	@Test
	void failsNamingTheWaysOutWhenDatabaseIsInMemory() {
		this.contextRunner.withPropertyValues(ALLOW_IN_MEMORY_DATABASE + "=false").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).startsWith("Leader election would elect through jdbc:h2:mem:")
				.contains("an in-memory database that only this process can see")
				.contains("every instance of the application would have a database of its own, and lead")
				.doesNotContain("DB_CLOSE_DELAY");
			assertThat(analysis.getAction()).startsWith("Set spring.datasource.url to a database that all instances "
					+ "share (or mark such a DataSource with @LeaderElectionDataSource), or, if the application runs "
					+ "as a single instance on purpose, set leader-election.backend=in-memory.")
				.contains(ALLOW_IN_MEMORY_DATABASE + "=true");
		});
	}

	@Test
	void failsWhenDatabaseIsHsqldbInMemory() {
		this.contextRunner
			.withPropertyValues(ALLOW_IN_MEMORY_DATABASE + "=false", "spring.datasource.url=jdbc:hsqldb:mem:elections")
			.run((context) -> assertThat(analyze(context).getDescription())
				.startsWith("Leader election would elect through jdbc:hsqldb:mem:elections, an in-memory database"));
	}

	@Test
	void failsWhenDatabaseIsDerbyInMemory() {
		// Derby writes derby.log into the working directory unless told otherwise.
		System.setProperty("derby.stream.error.field", "java.lang.System.err");
		this.contextRunner.withPropertyValues(ALLOW_IN_MEMORY_DATABASE + "=false").withBean(DataSource.class, () -> {
			EmbeddedDataSource dataSource = new EmbeddedDataSource();
			dataSource.setDatabaseName("memory:elections");
			dataSource.setCreateDatabase("create");
			return dataSource;
		})
			.run((context) -> assertThat(analyze(context).getDescription())
				.startsWith("Leader election would elect through jdbc:derby:memory:elections, an in-memory database"));
	}

	@Test
	void failsWhenDataSourceChosenAmongSeveralIsInMemory() {
		this.contextRunner.withPropertyValues(ALLOW_IN_MEMORY_DATABASE + "=false")
			.withUserConfiguration(QualifiedDataSourceConfiguration.class)
			.run((context) -> assertThat(analyze(context).getDescription())
				.startsWith("Leader election would elect through jdbc:h2:mem:qualified-election, an in-memory "));
	}

	@Test
	void failsWithReasonWhenTableCannotBeCheckedForAnotherReason() {
		DataSource refusingStatements = new DelegatingDataSource(h2(fileDatabaseUrl())) {

			@Override
			public Connection getConnection() throws SQLException {
				Connection connection = super.getConnection();
				return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(),
						new Class<?>[] { Connection.class }, (proxy, method, arguments) -> {
							if (method.getName().equals("createStatement")) {
								throw new SQLException("Query timed out", "57014");
							}
							try {
								return method.invoke(connection, arguments);
							}
							catch (InvocationTargetException ex) {
								throw ex.getCause();
							}
						});
			}

		};
		this.contextRunner.withBean(DataSource.class, () -> refusingStatements).run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).startsWith("Could not verify table leader_election: Query timed out")
				.contains("leader-election.jdbc.initialize-schema is 'embedded' and the database is not embedded");
			assertThat(analysis.getAction()).startsWith("Make sure the database user may read the table, which is "
					+ "created with:\nCREATE TABLE IF NOT EXISTS leader_election (");
		});
	}

	@Test
	void failsNamingSupportedDatabasesWhenDatabaseIsNotOne() {
		String url = "jdbc:hsqldb:file:" + this.directory.resolve("hsqldb").toAbsolutePath();
		this.contextRunner
			.withPropertyValues("spring.datasource.url=" + url + ";shutdown=true",
					"leader-election.jdbc.initialize-schema=always")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription())
					.isEqualTo("The JDBC lease store does not support the database 'HSQL Database Engine'; it supports "
							+ "MySQL, MariaDB, PostgreSQL, H2 (" + url + ").");
				assertThat(analysis.getAction()).isEqualTo("Mark a DataSource on one of those databases with "
						+ "@LeaderElectionDataSource, or set leader-election.backend to another backend (redis or "
						+ "zookeeper).");
			});
	}

	@Test
	void electsThroughFileDatabaseSharedByAutoServer() {
		this.contextRunner
			.withPropertyValues(ALLOW_IN_MEMORY_DATABASE + "=false",
					"spring.datasource.url=" + fileDatabaseUrl() + ";AUTO_SERVER=TRUE",
					"leader-election.jdbc.initialize-schema=always")
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(JdbcLeaseStore.class);
				ApplicationReady.publish(context);
				await().atMost(TIMEOUT).until(context.getBean(LeaderElection.class)::isLeader);
			});
	}

	@Test
	void electsThroughInMemoryDatabaseServedOverTheNetwork() throws Exception {
		int port = freePort();
		Server server = Server.createTcpServer("-tcpPort", String.valueOf(port), "-ifNotExists").start();
		try {
			this.contextRunner
				.withPropertyValues(ALLOW_IN_MEMORY_DATABASE + "=false",
						"spring.datasource.url=jdbc:h2:tcp://127.0.0.1:" + port + "/mem:shared;DB_CLOSE_DELAY=-1",
						"leader-election.jdbc.initialize-schema=always")
				.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(JdbcLeaseStore.class));
		}
		finally {
			server.stop();
		}
	}

	@Test
	void startsWhileDatabaseIsDownAndElectsOnceItAnswers(CapturedOutput output) throws Exception {
		int port = freePort();
		String url = "jdbc:h2:tcp://127.0.0.1:" + port + "/mem:late;DB_CLOSE_DELAY=-1";
		Server server = Server.createTcpServer("-tcpPort", String.valueOf(port), "-ifNotExists");
		try {
			this.contextRunner
				.withConfiguration(AutoConfigurations.of(LeaderElectionHealthContributorAutoConfiguration.class))
				.withPropertyValues("spring.datasource.url=" + url, "spring.datasource.username=sa",
						"leader-election.jdbc.initialize-schema=always", "leader-election.lease-duration=3s",
						"leader-election.renew-deadline=2s", "leader-election.retry-period=500ms")
				.run((context) -> {
					assertThat(context).hasNotFailed().hasSingleBean(JdbcLeaseStore.class);
					assertThat(output).containsOnlyOnce("Leader election could not reach its database at startup")
						.contains("competes once the database answers, after the table leader_election has been "
								+ "created if missing");
					ApplicationReady.publish(context);
					LeaderElectionHealthIndicator health = context.getBean(LeaderElectionHealthIndicator.class);
					await().atMost(TIMEOUT).until(() -> health.health().getStatus().equals(Status.DOWN));
					assertThat(group(health.health(), "default")).containsEntry("storeReachable", false)
						.containsEntry("role", "FOLLOWER")
						.hasEntrySatisfying("consecutiveFailures",
								(failures) -> assertThat((int) failures).isPositive());
					LeaderElection election = context.getBean(LeaderElection.class);
					assertThat(election.isLeader()).isFalse();
					server.start();
					await().atMost(TIMEOUT).until(election::isLeader);
					assertThat(health.health().getStatus()).isEqualTo(Status.UP);
					JdbcDataSource direct = (JdbcDataSource) h2(url);
					direct.setUser("sa");
					assertThatNoException().isThrownBy(() -> new JdbcLeaseStore(direct).verifyTable());
				});
		}
		finally {
			server.stop();
		}
	}

	@Test
	void failsWhenDatabaseIsDownAndFailFastIsSet() throws IOException {
		this.contextRunner
			.withPropertyValues("spring.datasource.url=" + unreachableUrl(), "leader-election.jdbc.fail-fast=true")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).startsWith(
						"Leader election could not reach its database at startup (leader-election.jdbc.fail-fast is "
								+ "true): ")
					.contains("refused");
				assertThat(analysis.getAction()).startsWith("Make sure the database is running and reachable with "
						+ "the configured URL and credentials, or set leader-election.jdbc.fail-fast=false to start "
						+ "without it");
			});
	}

	@Test
	void doesNotBlamePermissionsWhenDatabaseIsDownAndInitializationIsAlways() throws IOException {
		this.contextRunner
			.withPropertyValues("spring.datasource.url=" + unreachableUrl(), "leader-election.jdbc.fail-fast=true",
					"leader-election.jdbc.initialize-schema=always")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).startsWith("Leader election could not reach its database")
					.doesNotContain("Could not create table");
				assertThat(analysis.getAction()).doesNotContain("may create the table");
			});
	}

	@Test
	void doesNotBlamePermissionsWhenDatabaseGoesAwayWhileCreatingTable() {
		this.contextRunner.withBean(DataSource.class, () -> new AnsweringOnce(embedded("answering-once")))
			.withPropertyValues("leader-election.jdbc.fail-fast=true", "leader-election.jdbc.initialize-schema=always")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).startsWith("Leader election could not reach its database")
					.contains("Connection refused");
				assertThat(analysis.getAction()).doesNotContain("may create the table");
			});
	}

	@Test
	void startsWhenDatabaseGoesAwayWhileCreatingTable() {
		this.contextRunner.withBean(DataSource.class, () -> new AnsweringOnce(embedded("answering-once-lenient")))
			.withPropertyValues("leader-election.jdbc.initialize-schema=always")
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(JdbcLeaseStore.class));
	}

	@Test
	void listensForLeaseChangesOnPostgresUntilTheContextCloses() {
		String table = uniqueTableName();
		try {
			postgresContextRunner(table).run((context) -> {
				ApplicationReady.publish(context);
				await().atMost(Duration.ofSeconds(10)).until(() -> postgresListeners(table) == 1);
			});
			assertThat(postgresListeners(table)).isZero();
		}
		finally {
			executeOnPostgres("DROP TABLE IF EXISTS " + table + ", " + table + "_candidates, " + table + "_runs");
		}
	}

	@Test
	void doesNotListenOnPostgresWhenNotificationsAreOff() {
		String table = uniqueTableName();
		try {
			postgresContextRunner(table).withPropertyValues("leader-election.jdbc.notifications=false")
				.run((context) -> {
					ApplicationReady.publish(context);
					await().atMost(Duration.ofSeconds(10)).until(context.getBean(LeaderElection.class)::isLeader);
					await().during(Duration.ofSeconds(1))
						.atMost(Duration.ofSeconds(2))
						.until(() -> postgresListeners(table) == 0);
				});
		}
		finally {
			executeOnPostgres("DROP TABLE IF EXISTS " + table + ", " + table + "_candidates, " + table + "_runs");
		}
	}

	private ApplicationContextRunner postgresContextRunner(String table) {
		// Not the shared pool itself, which the context would close.
		return this.contextRunner.withBean(DataSource.class, () -> new DelegatingDataSource(TestDatabases.postgres()))
			.withPropertyValues("leader-election.jdbc.table-name=" + table,
					"leader-election.jdbc.initialize-schema=always");
	}

	private static String uniqueTableName() {
		return "leader_election_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
	}

	/**
	 * Connections whose last statement was the LISTEN of the table's channel: those
	 * listening.
	 */
	private static long postgresListeners(String table) {
		try (Connection connection = TestDatabases.postgres().getConnection();
				PreparedStatement statement = connection
					.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE query = ?")) {
			statement.setString(1, "LISTEN \"" + table + "_changed\"");
			try (ResultSet rows = statement.executeQuery()) {
				rows.next();
				return rows.getLong(1);
			}
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static void executeOnPostgres(String sql) {
		try (Connection connection = TestDatabases.postgres().getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> group(Health health, String group) {
		return (Map<String, Object>) ((Map<String, Object>) health.getDetails().get("groups")).get(group);
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

	/** A PostgreSQL URL on a loopback port where nothing listens. */
	private static String unreachableUrl() throws IOException {
		return "jdbc:postgresql://127.0.0.1:" + freePort() + "/test";
	}

	private String fileDatabaseUrl() {
		return "jdbc:h2:file:" + this.directory.resolve("leases").toAbsolutePath();
	}

	private static DataSource h2(String url) {
		JdbcDataSource dataSource = new JdbcDataSource();
		dataSource.setURL(url);
		return dataSource;
	}

	private static DataSource embedded(String name) {
		return h2("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1");
	}

	/**
	 * A database that answers the first connection request only, then refuses like a
	 * closed port.
	 */
	static class AnsweringOnce extends DelegatingDataSource {

		private final AtomicBoolean answered = new AtomicBoolean();

		AnsweringOnce(DataSource dataSource) {
			super(dataSource);
		}

		@Override
		public Connection getConnection() throws SQLException {
			if (this.answered.getAndSet(true)) {
				throw new SQLNonTransientConnectionException("Connection refused", "08001");
			}
			return super.getConnection();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class QualifiedDataSourceConfiguration {

		@Bean
		DataSource mainDataSource() {
			return embedded("qualified-main");
		}

		@Bean
		@LeaderElectionDataSource
		DataSource leaderElectionDataSource() {
			return embedded("qualified-election");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PrimaryDataSourceConfiguration {

		@Bean
		@Primary
		DataSource mainDataSource() {
			return embedded("primary-main");
		}

		@Bean
		DataSource otherDataSource() {
			return embedded("primary-other");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TwoDataSourcesConfiguration {

		@Bean
		DataSource mainDataSource() {
			return embedded("two-main");
		}

		@Bean
		DataSource otherDataSource() {
			return embedded("two-other");
		}

	}

}
