package io.github.leaderelection.jdbc;

import java.util.function.UnaryOperator;

/**
 * The statements on the table of run records ({@link TableName#runs}), rendered for a
 * dialect. A claim runs in one transaction: it locks the group's lease row, if it still
 * has the claiming holder and term and has not expired by the database clock, then the
 * job's row, and writes the run only if its tick is later than the row's. The lease row's
 * lock orders a claim with every take-over of the group.
 *
 * @param table the name of the table
 * @param ddl the statement that creates it, the same for every dialect
 * @param lockLease locks the lease row that has the group, holder and term and has not
 * expired
 * @param lockRun reads and locks the job's row
 * @param read reads the job's row
 * @param readGroup reads the rows of every job of the group, by job name
 * @param insert writes the job's first row
 * @param update replaces the job's row with a later run
 * @param finish writes the end of the run the job's row still has
 * @param verify checks that the table has the columns
 */
record RunRecordSql(String table, String ddl, String lockLease, String lockRun, String read, String readGroup,
		String insert, String update, String finish, String verify) {

	private static final String DDL = """
			CREATE TABLE IF NOT EXISTS {runs} (
			  group_name VARCHAR(255) NOT NULL,
			  job_name   VARCHAR(255) NOT NULL,
			  tick_ms    BIGINT NOT NULL,
			  holder_id  VARCHAR(255) NOT NULL,
			  term       BIGINT NOT NULL,
			  started_ms BIGINT NOT NULL,
			  ended_ms   BIGINT,
			  outcome    VARCHAR(16) NOT NULL,
			  PRIMARY KEY (group_name, job_name)
			)""";

	private static final String COLUMNS = "tick_ms, holder_id, term, started_ms, ended_ms, outcome";

	private static final String LOCK_LEASE = "SELECT term FROM {leases} WHERE group_name = ? AND holder_id = ? "
			+ "AND term = ? AND lease_until_ms > {now} FOR UPDATE";

	private static final String LOCK_RUN = "SELECT " + COLUMNS + " FROM {runs} WHERE group_name = ? AND job_name = ? "
			+ "FOR UPDATE";

	private static final String READ = "SELECT " + COLUMNS + " FROM {runs} WHERE group_name = ? AND job_name = ?";

	private static final String READ_GROUP = "SELECT job_name, " + COLUMNS + " FROM {runs} WHERE group_name = ? "
			+ "ORDER BY job_name";

	// A claimed run has not ended: ended_ms is written NULL as a literal, not bound.
	private static final String INSERT = "INSERT INTO {runs} (group_name, job_name, " + COLUMNS
			+ ") VALUES (?, ?, ?, ?, ?, ?, NULL, ?)";

	private static final String UPDATE = "UPDATE {runs} SET tick_ms = ?, holder_id = ?, term = ?, started_ms = ?, "
			+ "ended_ms = NULL, outcome = ? WHERE group_name = ? AND job_name = ?";

	private static final String FINISH = "UPDATE {runs} SET ended_ms = ?, outcome = ? WHERE group_name = ? "
			+ "AND job_name = ? AND tick_ms = ? AND holder_id = ? AND term = ?";

	private static final String VERIFY = "SELECT group_name, job_name, " + COLUMNS + " FROM {runs} WHERE 1 = 0";

	/** Returns the statement that creates the table, the same for every dialect. */
	static String ddl(String runsTable) {
		return DDL.replace("{runs}", runsTable);
	}

	static RunRecordSql of(SqlDialect dialect, String leasesTable) {
		String runs = TableName.runs(leasesTable);
		UnaryOperator<String> render = (template) -> template.replace("{runs}", runs)
			.replace("{leases}", leasesTable)
			.replace("{now}", dialect.nowMillis());
		return new RunRecordSql(runs, ddl(runs), render.apply(LOCK_LEASE), render.apply(LOCK_RUN), render.apply(READ),
				render.apply(READ_GROUP), render.apply(INSERT), render.apply(UPDATE), render.apply(FINISH),
				render.apply(VERIFY));
	}

}
