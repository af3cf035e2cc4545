package io.github.leaderelection.autoconfigure;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.util.Arrays;
import java.util.Locale;

import javax.sql.DataSource;

import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.jdbc.JdbcLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.EmbeddedDatabaseConnection;
import org.springframework.boot.sql.init.DatabaseInitializationMode;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Elects through a table in the application's database, after any database initializer
 * (Flyway, Liquibase, SQL scripts) has run. At startup it refuses an in-memory database,
 * which would give every instance a database and a leadership of its own, and creates the
 * table when schema initialization applies or checks it otherwise. A database that does
 * not answer at startup fails it only with {@code leader-election.jdbc.fail-fast}:
 * otherwise the store creates or checks the table once the database answers, and the
 * election retries until then like on any other store. The store is closed with the
 * context, which ends its PostgreSQL listener, if any.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ DataSource.class, EmbeddedDatabaseConnection.class, DatabaseInitializationMode.class })
@ConditionalOnMissingBean({ LeaseStore.class, LeaderElectionRegistry.class })
@ConditionalOnLeaderElectionBackend(LeaderElectionBackend.JDBC)
@EnableConfigurationProperties(LeaderElectionJdbcProperties.class)
class JdbcBackendConfiguration {

	private static final Logger logger = LoggerFactory.getLogger(JdbcBackendConfiguration.class);

	private static final String TABLE_NAME_PROPERTY = "leader-election.jdbc.table-name";

	private static final String INITIALIZE_SCHEMA_PROPERTY = "leader-election.jdbc.initialize-schema";

	private static final String FAIL_FAST_PROPERTY = "leader-election.jdbc.fail-fast";

	private static final String ALLOW_IN_MEMORY_DATABASE_PROPERTY = "leader-election.jdbc.allow-in-memory-database";

	@Bean
	@DependsOnDatabaseInitialization
	JdbcLeaseStore leaderElectionLeaseStore(LeaderElectionJdbcProperties properties,
			@LeaderElectionDataSource ObjectProvider<DataSource> leaderElectionDataSource,
			ObjectProvider<DataSource> dataSource, ListableBeanFactory beanFactory) {
		DataSource selected = leaderElectionDataSource.getIfAvailable(dataSource::getIfUnique);
		if (selected == null) {
			throw noUniqueDataSource(beanFactory);
		}
		JdbcLeaseStore store = createStore(selected, properties.getTableName(), properties.isNotifications());
		Connection connection;
		try {
			connection = selected.getConnection();
		}
		catch (SQLException | RuntimeException ex) {
			// Not an in-memory database either: that lives in this process and always
			// answers.
			unreachable(store, properties, properties.getInitializeSchema() == DatabaseInitializationMode.ALWAYS, ex);
			return store;
		}
		Database database = Database.of(connection);
		boolean inMemory = InMemoryDatabases.isInMemoryUrl(database.url());
		boolean embedded = inMemory || EmbeddedDatabaseConnection.isEmbedded(selected);
		if (embedded) {
			checkAllowed(database.url(), inMemory, properties);
		}
		checkSupported(database);
		initializeSchema(store, embedded, properties);
		return store;
	}

	private static JdbcLeaseStore createStore(DataSource dataSource, String tableName, boolean notifications) {
		try {
			return new JdbcLeaseStore(dataSource, tableName, notifications);
		}
		catch (IllegalArgumentException ex) {
			throw invalidTableName(tableName, ex);
		}
	}

	private static LeaderElectionConfigurationException invalidTableName(String tableName,
			IllegalArgumentException ex) {
		return new LeaderElectionConfigurationException(
				"Invalid value '" + tableName + "' for " + TABLE_NAME_PROPERTY + ": " + ex.getMessage(),
				"Set " + TABLE_NAME_PROPERTY + " to a table name of letters, digits and underscores that is not a "
						+ "reserved word of the database, optionally qualified by a schema (such as "
						+ "election.leader_election), or remove it to use leader_election.",
				ex);
	}

	private static void checkSupported(Database database) {
		if (database.productName() == null) {
			return; // the first store operation reports it, if need be
		}
		try {
			JdbcLeaseStore.requireSupportedDatabase(database.productName());
		}
		catch (IllegalStateException ex) {
			throw new LeaderElectionConfigurationException(
					ex.getMessage() + ((database.url() != null) ? " (" + withoutParameters(database.url()) + ")" : "")
							+ ".",
					"Mark a DataSource on one of those databases with @LeaderElectionDataSource, or set "
							+ BackendDetection.BACKEND_PROPERTY + " to another backend (redis or zookeeper).",
					ex);
		}
	}

	/**
	 * Refuses a database that only this process can see, unless told otherwise: every
	 * instance would elect itself, and nothing would show it.
	 */
	private static void checkAllowed(@Nullable String url, boolean inMemory, LeaderElectionJdbcProperties properties) {
		String database = ((url != null) ? withoutParameters(url) + ", " : "") + "an "
				+ (inMemory ? "in-memory" : "embedded") + " database that only this process can see";
		if (properties.isAllowInMemoryDatabase()) {
			logger.debug("Electing through {}, as {} is true", database, ALLOW_IN_MEMORY_DATABASE_PROPERTY);
			return;
		}
		throw new LeaderElectionConfigurationException(
				"Leader election would elect through " + database
						+ ": every instance of the application would have a database of its own, and lead.",
				"Set spring.datasource.url to a database that all instances share (or mark such a DataSource with "
						+ "@LeaderElectionDataSource), or, if the application runs as a single instance on "
						+ "purpose, set " + BackendDetection.BACKEND_PROPERTY + "=in-memory. (Tests of the JDBC "
						+ "backend itself may set " + ALLOW_IN_MEMORY_DATABASE_PROPERTY + "=true.)");
	}

	private static void initializeSchema(JdbcLeaseStore store, boolean embedded,
			LeaderElectionJdbcProperties properties) {
		DatabaseInitializationMode mode = properties.getInitializeSchema();
		boolean create = mode == DatabaseInitializationMode.ALWAYS
				|| (mode == DatabaseInitializationMode.EMBEDDED && embedded);
		try {
			if (create) {
				store.createTableIfMissing();
			}
			else {
				store.verifyTable();
			}
		}
		catch (IllegalArgumentException ex) {
			// The database refused the name itself (a word it reserves): neither a
			// missing table nor a lack of rights.
			throw invalidTableName(properties.getTableName(), ex);
		}
		catch (RuntimeException ex) {
			if (isConnectionFailure(ex)) {
				// The database went away since it answered: not a reason to blame the
				// table.
				unreachable(store, properties, create, ex);
				return;
			}
			throw create ? notCreated(store, mode, ex) : notVerified(store, mode, ex);
		}
	}

	private static LeaderElectionConfigurationException notCreated(JdbcLeaseStore store,
			DatabaseInitializationMode mode, RuntimeException ex) {
		return new LeaderElectionConfigurationException(
				ex.getMessage() + " (" + INITIALIZE_SCHEMA_PROPERTY + " is '" + value(mode) + "')",
				"Make sure the database user may create the table, or create it yourself with:\n" + store.ddl()
						+ ";\nand set " + INITIALIZE_SCHEMA_PROPERTY + "=never.",
				ex);
	}

	private static LeaderElectionConfigurationException notVerified(JdbcLeaseStore store,
			DatabaseInitializationMode mode, RuntimeException ex) {
		String notCreated = "\n(" + INITIALIZE_SCHEMA_PROPERTY + " is '" + value(mode) + "'"
				+ ((mode == DatabaseInitializationMode.EMBEDDED) ? " and the database is not embedded" : "")
				+ ", so the table is not created at startup.)";
		if (ex instanceof IllegalStateException) {
			return new LeaderElectionConfigurationException(ex.getMessage() + notCreated,
					"Create the table with the statement above (by hand or in a Flyway or Liquibase migration), or set "
							+ INITIALIZE_SCHEMA_PROPERTY + "=always to create it at startup.",
					ex);
		}
		return new LeaderElectionConfigurationException(ex.getMessage() + notCreated,
				"Make sure the database user may read the table, which is created with:\n" + store.ddl() + ";", ex);
	}

	/**
	 * A database that does not answer at startup is no configuration error: unless asked
	 * to fail, the application starts and the store sets up its table once the database
	 * answers.
	 */
	private static void unreachable(JdbcLeaseStore store, LeaderElectionJdbcProperties properties, boolean createTable,
			Throwable ex) {
		if (properties.isFailFast()) {
			throw new LeaderElectionConfigurationException(
					"Leader election could not reach its database at startup (" + FAIL_FAST_PROPERTY + " is true): "
							+ message(ex),
					"Make sure the database is running and reachable with the configured URL and credentials, or set "
							+ FAIL_FAST_PROPERTY + "=false to start without it: the election then retries, reports "
							+ "the store as down, and begins once the database answers.",
					ex);
		}
		store.prepareTableOnFirstUse(createTable);
		logger.warn(
				"Leader election could not reach its database at startup ({}). Starting anyway: this instance "
						+ "competes once the database answers, after the table {} has been {}; until then the election "
						+ "retries and its health reports the store as down. Set {}=true to fail startup instead.",
				message(ex), properties.getTableName(), createTable ? "created if missing" : "checked",
				FAIL_FAST_PROPERTY);
	}

	/**
	 * Whether a failure comes from the connection rather than the statement: SQLSTATE
	 * class 08 ("connection exception"), or the exception types that JDBC and pools use
	 * for it.
	 */
	static boolean isConnectionFailure(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			if (cause instanceof SQLTransientConnectionException || cause instanceof SQLNonTransientConnectionException
					|| cause instanceof SQLRecoverableException) {
				return true;
			}
			if (cause instanceof SQLException sql && sql.getSQLState() != null && sql.getSQLState().startsWith("08")) {
				return true;
			}
		}
		return false;
	}

	private static String message(Throwable ex) {
		return (ex.getMessage() != null) ? ex.getMessage() : ex.getClass().getName();
	}

	/** A JDBC URL without its settings, which may hold a password. */
	private static String withoutParameters(String url) {
		int end = url.length();
		for (char separator : new char[] { ';', '?' }) {
			int index = url.indexOf(separator);
			if (index >= 0) {
				end = Math.min(end, index);
			}
		}
		return url.substring(0, end);
	}

	private static LeaderElectionConfigurationException noUniqueDataSource(ListableBeanFactory beanFactory) {
		String[] names = beanFactory.getBeanNamesForType(DataSource.class, true, false);
		return new LeaderElectionConfigurationException(
				"Leader election uses the jdbc backend but cannot choose among the DataSource beans "
						+ Arrays.toString(names) + ": none is marked @LeaderElectionDataSource or @Primary.",
				"Mark the DataSource that holds the lease table with @LeaderElectionDataSource (or @Primary), or set "
						+ BackendDetection.BACKEND_PROPERTY + " to another backend.");
	}

	private static String value(@Nullable DatabaseInitializationMode mode) {
		return (mode != null) ? mode.name().toLowerCase(Locale.ROOT) : "";
	}

	/**
	 * What a connection tells of its database.
	 *
	 * @param url the JDBC URL, if the driver tells
	 * @param productName the product name, if the driver tells
	 */
	private record Database(@Nullable String url, @Nullable String productName) {

		/** Reads what the connection tells, and closes it. */
		static Database of(Connection connection) {
			try (connection) {
				DatabaseMetaData metaData = connection.getMetaData();
				return new Database(metaData.getURL(), metaData.getDatabaseProductName());
			}
			catch (SQLException ex) {
				logger.debug("Could not read the metadata of the leader election database", ex);
				return new Database(null, null);
			}
		}

	}

}
