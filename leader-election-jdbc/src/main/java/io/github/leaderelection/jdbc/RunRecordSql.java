package io.github.leaderelection.jdbc;

import java.util.function.UnaryOperator;

/**
 * The statements on the table of run records ({@link TableName#runs}), rendered for a
 * dialect. A claim writes the run only while the group's lease row still has the claiming
 * holder and term and has not expired by the database clock, and only over a run it may
 * follow, both checked by the statement that writes it: no lock outlives a statement. A
 * claim held open across round trips would lock the lease row for as long as its process
 * is frozen (a pause, a stopped process, a long collection), and keep every other
 * candidate from taking the group when its lease ends.
 *
 * @param table the name of the table
 * @param ddl the statement that creates it, the same for every dialect
 * @param claimOver replaces the job's row with a later run, under a live lease
 * @param claimFirst writes the job's first row, under a live lease
 * @param read reads the job's row
 * @param readGroup reads the rows of every job of the group, by job name
 * @param finish writes the end of the run the job's row still has
 * @param verify checks that the table has the columns
 */
record RunRecordSql(String table, String ddl, String claimOver, String claimFirst, String read, String readGroup,
		String finish, String verify) {

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

	private static final String LIVE_LEASE = "EXISTS (SELECT 1 FROM {leases} WHERE group_name = ? AND holder_id = ? "
			+ "AND term = ? AND lease_until_ms > {now})";

	// A later tick, at least the minimum interval after the row's (passed as the tick
	// minus that interval), in a term at least the row's.
	private static final String CLAIM_OVER = "UPDATE {runs} SET tick_ms = ?, holder_id = ?, term = ?, started_ms = ?, "
			+ "ended_ms = NULL, outcome = ? WHERE group_name = ? AND job_name = ? AND tick_ms < ? AND tick_ms <= ? "
			+ "AND term <= ? AND " + LIVE_LEASE;

	// A claimed run has not ended: ended_ms is left to its default, NULL. A row written
	// meanwhile by another claim makes this one fail on the primary key.
	private static final String CLAIM_FIRST = "INSERT INTO {runs} (group_name, job_name, tick_ms, holder_id, term, "
			+ "started_ms, outcome) SELECT ?, ?, ?, ?, ?, ?, ? FROM {leases} WHERE group_name = ? AND holder_id = ? "
			+ "AND term = ? AND lease_until_ms > {now}";

	private static final String READ = "SELECT " + COLUMNS + " FROM {runs} WHERE group_name = ? AND job_name = ?";

	private static final String READ_GROUP = "SELECT job_name, " + COLUMNS + " FROM {runs} WHERE group_name = ? "
			+ "ORDER BY job_name";

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
		return new RunRecordSql(runs, ddl(runs), render.apply(CLAIM_OVER), render.apply(CLAIM_FIRST),
				render.apply(READ), render.apply(READ_GROUP), render.apply(FINISH), render.apply(VERIFY));
	}

}
