package io.github.leaderelection;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The run records of one group's leader-only jobs, kept in the election's store next to
 * its lease: what lets a job run each tick at most once across a hand-over, and lets a
 * new leader find the ticks its predecessor missed. Given by
 * {@link LeaderElection#runRecords()} when the store keeps them.
 *
 * <p>
 * Every method calls the store on the caller's thread, within the store call timeout, and
 * throws a {@link LeaderElectionException} when the store cannot answer. Times come from
 * the caller: the engine never reads the wall clock.
 */
public interface RunRecords {

	/**
	 * Reads the last run of a job.
	 * @param job the job's name in the group
	 * @return the run, or empty if the job has never run in the group
	 */
	Optional<RunRecord> lastRun(String job);

	/**
	 * Reads the last run of every job of the group, those of jobs that no instance
	 * schedules any more included.
	 * @return the runs in job-name order, empty if no job has run in the group
	 */
	List<RunRecord> all();

	/**
	 * Claims a run of a job under this instance's leadership, fenced by its lease: the
	 * store writes it only while this instance holds the group's lease in its current
	 * term, and only for a tick later than the job's last one (by at least
	 * {@code minInterval}).
	 * @param job the job's name in the group
	 * @param tick the instant the run is due, in epoch milliseconds
	 * @param started when it starts
	 * @param minInterval how long after the last run's tick this one's may be, at least
	 * @return the run claimed, or empty when this instance does not lead or the tick was
	 * already claimed
	 */
	Optional<RunRecord> claim(String job, long tick, Instant started, Duration minInterval);

	/**
	 * Records how a claimed run ended, unless a later run was claimed since.
	 * @param run the run {@link #claim} returned
	 * @param outcome how it ended
	 * @param ended when
	 * @return whether the end was written
	 */
	boolean finish(RunRecord run, RunOutcome outcome, Instant ended);

}
