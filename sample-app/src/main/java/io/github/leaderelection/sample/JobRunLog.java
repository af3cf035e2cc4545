package io.github.leaderelection.sample;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.leaderelection.Leadership;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Appends a row to {@code sample_job_run} for each run of the job, fenced by the leader's
 * term: a write carrying a term lower than one already written is refused. This is the
 * pattern to copy for any write that must never come from two leaders.
 *
 * <p>
 * The fence row's lock orders the writers, so a writer must never hold it for long: a
 * stale leader whose link hangs after its {@code UPDATE} would otherwise block the new
 * leader's writes for as long as the link hangs (a half-open TCP connection can last
 * hours). Two bounds take care of it: the transaction timeout here (a waiting writer
 * gives up), and the database's idle-transaction timeout set on every connection by the
 * profiles (the server rolls back a transaction whose client went quiet, which releases
 * the lock).
 */
@Component
public class JobRunLog {

	private static final Logger logger = LoggerFactory.getLogger(JobRunLog.class);

	private final JdbcTemplate jdbc;

	private final TransactionTemplate transaction;

	/**
	 * Creates the log.
	 * @param jdbc the application's database
	 * @param transactions its transaction manager
	 * @param fenceTimeout the longest a fenced write may take, waiting for the fence
	 * row's lock included: a write that cannot get the lock in time fails (the job runs
	 * again later) instead of hanging. The lock itself is bounded on the server (see the
	 * mariadb and postgres profiles), so that a writer whose link hangs mid-transaction
	 * cannot hold it for long.
	 */
	public JobRunLog(JdbcTemplate jdbc, PlatformTransactionManager transactions,
			@Value("${sample.fence-timeout:5s}") Duration fenceTimeout) {
		this.jdbc = jdbc;
		this.transaction = new TransactionTemplate(transactions);
		// Applied by JdbcTemplate to every statement of the transaction as its query
		// timeout.
		this.transaction.setTimeout((int) Math.max(1, fenceTimeout.toSeconds()));
	}

	/**
	 * Records one run in the given leadership's term.
	 * @return whether the write was accepted; {@code false} when a newer term has written
	 */
	public boolean record(Leadership leadership) {
		Boolean accepted = this.transaction.execute((status) -> {
			// The fence row's lock orders concurrent writers: once a term has written,
			// lower ones fail.
			int fenced = this.jdbc.update("UPDATE sample_fence SET max_term = ? WHERE group_name = ? AND max_term <= ?",
					leadership.term(), leadership.group(), leadership.term());
			if (fenced == 0 && createFence(leadership.group())) {
				fenced = this.jdbc.update("UPDATE sample_fence SET max_term = ? WHERE group_name = ? AND max_term <= ?",
						leadership.term(), leadership.group(), leadership.term());
			}
			if (fenced == 0) {
				return false;
			}
			this.jdbc.update(
					"INSERT INTO sample_job_run (group_name, candidate_id, term, ran_at) "
							+ "VALUES (?, ?, ?, CURRENT_TIMESTAMP(3))",
					leadership.group(), leadership.candidateId(), leadership.term());
			return true;
		});
		if (!Boolean.TRUE.equals(accepted)) {
			logger.warn("Refused a stale write of term {} in group '{}': a newer term has written", leadership.term(),
					leadership.group());
			return false;
		}
		return true;
	}

	/**
	 * The last runs of a group, newest first.
	 * @param group the group
	 * @param limit how many at most
	 * @return each run's term, the candidate that ran it and when
	 */
	public List<Map<String, Object>> lastRuns(String group, int limit) {
		return this.jdbc.query("SELECT term, candidate_id, ran_at FROM sample_job_run WHERE group_name = ? "
				+ "ORDER BY ran_at DESC, term DESC", (rows) -> {
					List<Map<String, Object>> runs = new ArrayList<>();
					while (rows.next() && runs.size() < limit) {
						Map<String, Object> run = new LinkedHashMap<>();
						run.put("term", rows.getLong("term"));
						run.put("candidateId", rows.getString("candidate_id"));
						run.put("ranAt", rows.getTimestamp("ran_at").toInstant().toString());
						runs.add(run);
					}
					return runs;
				}, group);
	}

	private boolean createFence(String group) {
		Integer existing = this.jdbc.queryForObject("SELECT COUNT(*) FROM sample_fence WHERE group_name = ?",
				Integer.class, group);
		if (existing != null && existing > 0) {
			return false;
		}
		try {
			this.jdbc.update("INSERT INTO sample_fence (group_name, max_term) VALUES (?, 0)", group);
		}
		catch (DuplicateKeyException ex) {
			// Another instance created it first.
		}
		return true;
	}

}
