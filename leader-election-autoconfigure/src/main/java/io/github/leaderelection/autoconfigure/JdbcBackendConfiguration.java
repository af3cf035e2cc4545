package io.github.leaderelection.autoconfigure;

import java.util.Arrays;
import java.util.Locale;

import javax.sql.DataSource;

import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.jdbc.JdbcLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import org.jspecify.annotations.Nullable;

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
 * Elects through a table in the application's database. The table is created at startup when
 * schema initialization applies, and otherwise checked, after any database initializer (Flyway,
 * Liquibase, SQL scripts) has run. The store is closed with the context, which ends its
 * PostgreSQL listener, if any.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ DataSource.class, EmbeddedDatabaseConnection.class, DatabaseInitializationMode.class })
@ConditionalOnMissingBean({ LeaseStore.class, LeaderElectionRegistry.class })
@ConditionalOnLeaderElectionBackend(LeaderElectionBackend.JDBC)
@EnableConfigurationProperties(LeaderElectionJdbcProperties.class)
class JdbcBackendConfiguration {

	private static final String TABLE_NAME_PROPERTY = "leader-election.jdbc.table-name";

	private static final String INITIALIZE_SCHEMA_PROPERTY = "leader-election.jdbc.initialize-schema";

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
		initializeSchema(store, selected, properties.getInitializeSchema());
		return store;
	}

	private static JdbcLeaseStore createStore(DataSource dataSource, String tableName, boolean notifications) {
		try {
			return new JdbcLeaseStore(dataSource, tableName, notifications);
		}
		catch (IllegalArgumentException ex) {
			throw new LeaderElectionConfigurationException(
					"Invalid value '" + tableName + "' for " + TABLE_NAME_PROPERTY + ": " + ex.getMessage(),
					"Set " + TABLE_NAME_PROPERTY + " to a table name of letters, digits and underscores, optionally "
							+ "qualified by a schema (such as election.leader_election), or remove it to use "
							+ "leader_election.",
					ex);
		}
	}

	private static void initializeSchema(JdbcLeaseStore store, DataSource dataSource, DatabaseInitializationMode mode) {
		if (mode == DatabaseInitializationMode.ALWAYS
				|| (mode == DatabaseInitializationMode.EMBEDDED && EmbeddedDatabaseConnection.isEmbedded(dataSource))) {
			try {
				store.createTableIfMissing();
			}
			catch (LeaderElectionException ex) {
				throw new LeaderElectionConfigurationException(
						ex.getMessage() + " (" + INITIALIZE_SCHEMA_PROPERTY + " is '" + value(mode) + "')",
						"Make sure the database user may create the table, or create it yourself with:\n" + store.ddl()
								+ ";\nand set " + INITIALIZE_SCHEMA_PROPERTY + "=never.",
						ex);
			}
			return;
		}
		try {
			store.verifyTable();
		}
		catch (IllegalStateException ex) {
			throw new LeaderElectionConfigurationException(
					ex.getMessage() + "\n(" + INITIALIZE_SCHEMA_PROPERTY + " is '" + value(mode) + "'"
							+ ((mode == DatabaseInitializationMode.EMBEDDED) ? " and the database is not embedded" : "")
							+ ", so the table is not created at startup.)",
					"Create the table with the statement above (by hand or in a Flyway or Liquibase migration), or set "
							+ INITIALIZE_SCHEMA_PROPERTY + "=always to create it at startup.",
					ex);
		}
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

}
