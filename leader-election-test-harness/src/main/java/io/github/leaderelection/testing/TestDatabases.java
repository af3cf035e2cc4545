package io.github.leaderelection.testing;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.JdbcDatabaseContainer;
import org.testcontainers.mysql.MySQLContainer;
import org.testcontainers.postgresql.PostgreSQLContainer;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * The databases the JDBC tests run on, each resolved once per JVM: an environment
 * variable, else a Testcontainers container when Docker is available, else the service on
 * its default local port. A database that none of these provides fails the tests that
 * need it.
 */
public final class TestDatabases {

	public static final String MYSQL_URL_VARIABLE = "LEADER_ELECTION_TEST_MYSQL_URL";

	public static final String POSTGRES_URL_VARIABLE = "LEADER_ELECTION_TEST_POSTGRES_URL";

	private static final Map<String, DataSource> dataSources = new HashMap<>();

	private static final Map<String, Endpoint> resolved = new HashMap<>();

	private TestDatabases() {
	}

	/** An in-process H2 in-memory database in its default mode. */
	public static DataSource h2() {
		return h2("Regular");
	}

	/** An in-process H2 in-memory database in the given compatibility mode. */
	public static synchronized DataSource h2(String mode) {
		return dataSources.computeIfAbsent("h2-" + mode, (key) -> pool(new Endpoint(
				"jdbc:h2:mem:leader_election_" + mode.toLowerCase(Locale.ROOT) + ";MODE=" + mode + ";DB_CLOSE_DELAY=-1",
				"sa", ""), Map.of()));
	}

	/** MySQL 8 or MariaDB. */
	public static DataSource mysqlFamily() {
		return mysqlFamily(Map.of());
	}

	/**
	 * MySQL 8 or MariaDB, with extra driver properties such as {@code useAffectedRows}.
	 */
	public static synchronized DataSource mysqlFamily(Map<String, String> driverProperties) {
		Endpoint endpoint = resolved.computeIfAbsent("mysql", (key) -> resolve("MySQL-family", MYSQL_URL_VARIABLE,
				() -> new MySQLContainer("mysql:8.4"), new Endpoint("jdbc:mariadb://127.0.0.1:3306/test", "root", ""),
				"run MariaDB or MySQL on 127.0.0.1:3306 with a database test and a user root without password"));
		return dataSources.computeIfAbsent("mysql" + driverProperties, (key) -> pool(endpoint, driverProperties));
	}

	/** PostgreSQL, through a pool shared by all tests: do not close it. */
	public static synchronized DataSource postgres() {
		Endpoint endpoint = resolved.computeIfAbsent("postgres", (key) -> resolve("PostgreSQL", POSTGRES_URL_VARIABLE,
				() -> new PostgreSQLContainer("postgres:17-alpine"),
				new Endpoint("jdbc:postgresql://127.0.0.1:5432/test", "postgres", ""),
				"run PostgreSQL on 127.0.0.1:5432 with a database test and a user postgres trusted from loopback"));
		return dataSources.computeIfAbsent("postgres", (key) -> pool(endpoint, Map.of()));
	}

	private static Endpoint resolve(String name, String variable, Supplier<JdbcDatabaseContainer<?>> containers,
			Endpoint local, String localHint) {
		String url = System.getenv(variable);
		if (url != null && !url.isBlank()) {
			return check(new Endpoint(url, null, null), "The " + name + " test database named by " + variable
					+ " did not answer; fix or unset the variable");
		}
		if (DockerClientFactory.instance().isDockerAvailable()) {
			JdbcDatabaseContainer<?> container = containers.get();
			container.start();
			return check(new Endpoint(container.getJdbcUrl(), container.getUsername(), container.getPassword()),
					"The " + name + " test container did not answer");
		}
		return check(local,
				"No " + name + " test database answered at " + local.url() + ". Provide one: set " + variable
						+ " to a JDBC URL that includes user and password, or start a Docker engine for "
						+ "Testcontainers, or " + localHint);
	}

	private static Endpoint check(Endpoint endpoint, String failure) {
		try (HikariDataSource dataSource = pool(endpoint, Map.of())) {
			return endpoint;
		}
		catch (RuntimeException ex) {
			return fail(failure + " (" + ex.getMessage() + ")", ex);
		}
	}

	private static HikariDataSource pool(Endpoint endpoint, Map<String, String> driverProperties) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(endpoint.url());
		config.setUsername(endpoint.user());
		config.setPassword(endpoint.password());
		config.setMaximumPoolSize(8);
		config.setConnectionTimeout(10_000);
		driverProperties.forEach(config::addDataSourceProperty);
		return new HikariDataSource(config);
	}

	private record Endpoint(String url, String user, String password) {
	}

}
