package io.github.leaderelection.sample;

import io.github.leaderelection.Leadership;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Appends a row to {@code sample_job_run} for each run of the job, fenced by the leader's term: a
 * write carrying a term lower than one already written is refused. This is the pattern to copy for
 * any write that must never come from two leaders.
 */
@Component
public class JobRunLog {

	private static final Logger logger = LoggerFactory.getLogger(JobRunLog.class);

	private final JdbcTemplate jdbc;

	private final TransactionTemplate transaction;

	public JobRunLog(JdbcTemplate jdbc, TransactionTemplate transaction) {
		this.jdbc = jdbc;
		this.transaction = transaction;
	}

	/**
	 * Records one run in the given leadership's term.
	 * @return whether the write was accepted; {@code false} when a newer term has written
	 */
	public boolean record(Leadership leadership) {
		Boolean accepted = this.transaction.execute((status) -> {
			// The fence row's lock orders concurrent writers: once a term has written, lower ones fail.
			int fenced = this.jdbc.update("UPDATE sample_fence SET max_term = ? WHERE group_name = ? AND max_term <= ?",
					leadership.term(), leadership.group(), leadership.term());
			if (fenced == 0 && createFence(leadership.group())) {
				fenced = this.jdbc.update("UPDATE sample_fence SET max_term = ? WHERE group_name = ? AND max_term <= ?",
						leadership.term(), leadership.group(), leadership.term());
			}
			if (fenced == 0) {
				return false;
			}
			this.jdbc.update("INSERT INTO sample_job_run (group_name, candidate_id, term, ran_at) "
					+ "VALUES (?, ?, ?, CURRENT_TIMESTAMP(3))", leadership.group(), leadership.candidateId(),
					leadership.term());
			return true;
		});
		if (!Boolean.TRUE.equals(accepted)) {
			logger.warn("Refused a stale write of term {} in group '{}': a newer term has written", leadership.term(),
					leadership.group());
			return false;
		}
		return true;
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
