package io.github.leaderelection.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.sql.init.DatabaseInitializationMode;

/**
 * Configuration properties for leader election through a database table.
 */
@ConfigurationProperties("leader-election.jdbc")
public class LeaderElectionJdbcProperties {

	/**
	 * Name of the lease table, optionally qualified by a schema.
	 */
	private String tableName = "leader_election";

	/**
	 * When to create the lease table, and the tables of candidates and run records named
	 * after it, if they are missing: at startup, or once the database answers if it did
	 * not then. Otherwise the lease table's presence is checked, and a missing table
	 * fails startup (or, if the database answers only later, the election) with the
	 * statements that create them.
	 */
	private DatabaseInitializationMode initializeSchema = DatabaseInitializationMode.EMBEDDED;

	/**
	 * Whether to listen for lease changes on PostgreSQL (LISTEN/NOTIFY), so that
	 * followers take over a released lease at once instead of at their next retry. Holds
	 * one connection of the pool while the application runs, which must be a direct
	 * connection (not through PgBouncer in transaction pooling mode). No effect on other
	 * databases.
	 */
	private boolean notifications = true;

	/**
	 * Whether to fail startup when the database cannot be reached. Otherwise the
	 * application starts, the election retries and reports the store as down, and the
	 * lease table is created or checked once the database answers.
	 */
	private boolean failFast;

	/**
	 * Whether to elect through an in-memory database (such as jdbc:h2:mem:), which only
	 * this process can see, so that every instance of the application leads. For tests of
	 * the JDBC backend itself; an application that runs as a single instance on purpose
	 * sets leader-election.backend=in-memory instead.
	 */
	private boolean allowInMemoryDatabase;

	public String getTableName() {
		return this.tableName;
	}

	public void setTableName(String tableName) {
		this.tableName = tableName;
	}

	public DatabaseInitializationMode getInitializeSchema() {
		return this.initializeSchema;
	}

	public void setInitializeSchema(DatabaseInitializationMode initializeSchema) {
		this.initializeSchema = initializeSchema;
	}

	public boolean isNotifications() {
		return this.notifications;
	}

	public void setNotifications(boolean notifications) {
		this.notifications = notifications;
	}

	public boolean isFailFast() {
		return this.failFast;
	}

	public void setFailFast(boolean failFast) {
		this.failFast = failFast;
	}

	public boolean isAllowInMemoryDatabase() {
		return this.allowInMemoryDatabase;
	}

	public void setAllowInMemoryDatabase(boolean allowInMemoryDatabase) {
		this.allowInMemoryDatabase = allowInMemoryDatabase;
	}

}
