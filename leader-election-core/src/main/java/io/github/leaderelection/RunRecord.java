package io.github.leaderelection;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The last run of a leader-only job in a group, as the election's store keeps it: which
 * tick it was, who ran it in which term, when, and how it ended.
 *
 * <p>
 * A tick is the instant a run was due, in milliseconds since the epoch by the clock of
 * the instance that claimed it: the cron instant of a cron job, the start of a run of a
 * fixed-rate or fixed-delay job. Ticks only grow: the store refuses to claim a tick that
 * is not later than the last one.
 *
 * @param group the group whose leader ran the job
 * @param job the job's name, unique in the group
 * @param tick the instant the run was due, in epoch milliseconds
 * @param holder the candidate that claimed the run
 * @param term the term it claimed the run in
 * @param started when the run started, by the clock of the instance that ran it
 * @param ended when it ended, or null while it is {@link RunOutcome#RUNNING running}
 * @param outcome how it ended
 */
public record RunRecord(String group, String job, long tick, String holder, long term, Instant started,
		@Nullable Instant ended, RunOutcome outcome) {

	public RunRecord {
		Objects.requireNonNull(group, "group");
		Objects.requireNonNull(job, "job");
		Objects.requireNonNull(holder, "holder");
		Objects.requireNonNull(started, "started");
		Objects.requireNonNull(outcome, "outcome");
	}

	/**
	 * This run as ended.
	 * @param outcome how it ended
	 * @param at when
	 * @return the record to write
	 */
	public RunRecord endedAs(RunOutcome outcome, Instant at) {
		return new RunRecord(this.group, this.job, this.tick, this.holder, this.term, this.started, at, outcome);
	}

	/**
	 * Whether this run may be claimed after the last one: its tick is later, by at least
	 * {@code minInterval}, and its term is no older. The rule every store applies to a
	 * claim, in the same atomic step as its write.
	 * @param last the job's last run, or null if it never ran
	 * @param minInterval how long after the last run's tick this one's may be, at least
	 * @return whether this run may follow it
	 */
	public boolean mayFollow(@Nullable RunRecord last, Duration minInterval) {
		return last == null
				|| (this.tick > last.tick && this.tick - last.tick >= minInterval.toMillis() && this.term >= last.term);
	}

	/**
	 * Whether this record and the other are of the same run: the same tick claimed by the
	 * same holder in the same term.
	 * @param other another record of the job
	 * @return whether they are of the same run
	 */
	public boolean isSameRunAs(RunRecord other) {
		return this.group.equals(other.group) && this.job.equals(other.job) && this.tick == other.tick
				&& this.holder.equals(other.holder) && this.term == other.term;
	}

}
