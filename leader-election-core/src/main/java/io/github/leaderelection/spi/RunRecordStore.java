package io.github.leaderelection.spi;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;

/**
 * A capability of a {@link LeaseStore}: it keeps, next to each group's lease, the last
 * run of each of the group's leader-only jobs ({@link RunRecord}), and claims a run
 * fenced by the lease, so that a tick runs at most once whichever instance's clock fired
 * it, and a leader that lost its lease claims nothing.
 *
 * <p>
 * The rules a store keeps (checked by the contract tests):
 * <ul>
 * <li>a claim succeeds only while the group's record has the lease's holder and term (and
 * {@linkplain Lease#version() version}, on a store that hands one out) and the lease has
 * not expired by the store's clock, all checked in the same atomic step as the
 * write;</li>
 * <li>a claim succeeds only for a tick later than the job's last one, and at least
 * {@code minInterval} after it, and from a term no older than the last one's;</li>
 * <li>a run's end is written only while the job's record is still that run.</li>
 * </ul>
 */
public interface RunRecordStore {

	/**
	 * Reads the last run of a job.
	 * @param group the group
	 * @param job the job
	 * @param timeout how long the call may take
	 * @return the run, or empty when the job has never been claimed in the group
	 */
	Optional<RunRecord> lastRun(String group, String job, Duration timeout);

	/**
	 * Reads the last run of every job of a group: what shows the records of jobs that no
	 * instance schedules any more. One record per job the group was ever claimed for, so
	 * the answer is as large as the group's jobs, whatever the other groups hold.
	 * @param group the group
	 * @param timeout how long the call may take
	 * @return the runs in job-name order ({@link String#compareTo}), empty when no job of
	 * the group has been claimed
	 */
	List<RunRecord> runs(String group, Duration timeout);

	/**
	 * Claims a run: writes {@code run} as the job's last run, if the rules above allow.
	 * @param lease the lease the run is claimed under, the one the last renewal handed
	 * out
	 * @param run the run to claim, with the lease's group, holder and term, and
	 * {@link RunOutcome#RUNNING}
	 * @param minInterval how long after the last run's tick this one's may be, at least
	 * (zero for any later tick)
	 * @param timeout how long the call may take
	 * @return whether the run was claimed
	 */
	boolean claimRun(Lease lease, RunRecord run, Duration minInterval, Duration timeout);

	/**
	 * Records how a claimed run ended, if the job's record is still that run (the same
	 * tick, holder and term); otherwise does nothing. The lease need not be held any
	 * more: a leader that lost it mid-run still says how the run ended, unless a later
	 * run was claimed since.
	 * @param ended the run as ended ({@link RunRecord#endedAs})
	 * @param timeout how long the call may take
	 * @return whether the end was written
	 */
	boolean finishRun(RunRecord ended, Duration timeout);

	/**
	 * Whether the run names the lease it is claimed under: the lease's group, holder and
	 * term. A store refuses any other claim before it asks the server.
	 * @param lease the lease the run is claimed under
	 * @param run the run to claim
	 * @return whether the run is the lease's
	 */
	static boolean isClaimedUnder(Lease lease, RunRecord run) {
		return lease.holder() != null && lease.holder().equals(run.holder()) && lease.term() == run.term()
				&& lease.group().equals(run.group());
	}

}
