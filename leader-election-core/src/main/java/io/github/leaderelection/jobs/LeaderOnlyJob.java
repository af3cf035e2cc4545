package io.github.leaderelection.jobs;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.RunRecords;

/**
 * One leader-only job of a group, run at most once per tick: before a run, the leader
 * claims its tick in the group's {@linkplain RunRecords run records}, fenced by its
 * lease; a tick already claimed, by this instance or another whose clock fired it too, is
 * not run again. When an instance becomes leader it asks {@link #missedTick} whether
 * ticks passed unrun since the last recorded run, and runs the job once for them if its
 * {@link MissedTicks} policy says so.
 *
 * <p>
 * What this cannot promise: a leader that stops mid-run (a crash, a pause past its lease)
 * leaves its run's record {@link RunOutcome#RUNNING}; the tick is not run again, so its
 * work may be half done. A run is claimed before it starts, never after, so a tick is
 * never run twice, but may be lost that way.
 *
 * <p>
 * Every method that reads or claims calls the store on the caller's thread and throws a
 * {@link LeaderElectionException} when it cannot answer. Instants come from the caller.
 */
public final class LeaderOnlyJob {

	/**
	 * Windows back from now in which the newest missed instant of a calendar is looked
	 * for before walking the whole way from the last run: a job due every second and last
	 * run days ago is found in the first.
	 */
	private static final List<Duration> SEARCH_WINDOWS = List.of(Duration.ofMinutes(1), Duration.ofHours(1),
			Duration.ofDays(1), Duration.ofDays(31));

	private final LeaderElection election;

	private final RunRecords records;

	private final String name;

	private final JobSchedule schedule;

	private final MissedTicks missedTicks;

	/**
	 * Creates a job.
	 * @param election the group whose leader runs it
	 * @param name its name, unique in the group
	 * @param schedule when it is due
	 * @param missedTicks what a new leader does with the ticks missed
	 * @throws IllegalStateException if the group's store keeps no run records
	 */
	public LeaderOnlyJob(LeaderElection election, String name, JobSchedule schedule, MissedTicks missedTicks) {
		this.election = Objects.requireNonNull(election, "election");
		this.name = Objects.requireNonNull(name, "name");
		this.schedule = Objects.requireNonNull(schedule, "schedule");
		this.missedTicks = Objects.requireNonNull(missedTicks, "missedTicks");
		this.records = election.runRecords()
			.orElseThrow(() -> new IllegalStateException("The store of group '" + election.group()
					+ "' keeps no run records, so job '" + name + "' cannot be run once per tick"));
	}

	/** The job's name in its group. */
	public String name() {
		return this.name;
	}

	/** The group whose leader runs the job. */
	public String group() {
		return this.election.group();
	}

	/** The election of that group. */
	public LeaderElection election() {
		return this.election;
	}

	/** When the job is due. */
	public JobSchedule schedule() {
		return this.schedule;
	}

	/** What a new leader does with the ticks missed. */
	public MissedTicks missedTicks() {
		return this.missedTicks;
	}

	/**
	 * Claims the run of a tick under this instance's leadership.
	 * @param tick the instant the run was due
	 * @param now when it starts
	 * @return the run claimed; empty when this instance does not lead the group or the
	 * tick (or one less than {@link JobSchedule#minInterval()} before it) was already
	 * claimed
	 */
	public Optional<RunRecord> claim(Instant tick, Instant now) {
		return this.records.claim(this.name, tick.toEpochMilli(), now, this.schedule.minInterval());
	}

	/**
	 * Records how a claimed run ended, unless a later run was claimed since.
	 * @param run the run {@link #claim} returned
	 * @param outcome how it ended
	 * @param now when
	 * @return whether the end was written
	 */
	public boolean finish(RunRecord run, RunOutcome outcome, Instant now) {
		return this.records.finish(run, outcome, now);
	}

	/**
	 * Reads the job's last run in the group, by whichever instance ran it.
	 * @return the run, or empty if the job has never run
	 */
	public Optional<RunRecord> lastRun() {
		return this.records.lastRun(this.name);
	}

	/**
	 * The job's last run, if its tick lies ahead of {@code now} by more than
	 * {@code tolerance}: claimed by an instance whose clock is ahead of this one's (or
	 * this one's behind). No tick up to it can be claimed any more, so this instance runs
	 * the job only once its clock has passed it; the caller says so.
	 * @param now this instance's time
	 * @param tolerance how far ahead a tick may lie without it being a clock that is off
	 * @return the run, or empty when its tick is not that far ahead or the job never ran
	 */
	public Optional<RunRecord> lastRunAhead(Instant now, Duration tolerance) {
		long limit = now.plus(tolerance).toEpochMilli();
		return lastRun().filter((last) -> last.tick() > limit);
	}

	/**
	 * Finds the ticks that passed unrun since the job's last recorded run. A job that has
	 * never run has missed nothing: its first tick is the first one after it was
	 * scheduled. A fixed-delay job never misses a tick.
	 * @param now the instant to look back from
	 * @return the ticks missed and what to do, or empty when none was
	 */
	public Optional<MissedTick> missedTick(Instant now) {
		if (this.schedule instanceof JobSchedule.FixedDelay) {
			return Optional.empty();
		}
		return lastRun().flatMap((last) -> missedSince(Instant.ofEpochMilli(last.tick()), now));
	}

	Optional<MissedTick> missedSince(Instant last, Instant now) {
		Instant first;
		Instant newest;
		if (this.schedule instanceof JobSchedule.FixedRate rate) {
			long period = rate.period().toMillis();
			long periods = (now.toEpochMilli() - last.toEpochMilli()) / Math.max(1, period);
			if (periods < 1) {
				return Optional.empty();
			}
			first = last.plusMillis(period);
			newest = last.plusMillis(periods * period);
		}
		else if (this.schedule instanceof JobSchedule.Calendar calendar) {
			Instant next = calendar.next().after(last);
			if (next == null || next.isAfter(now)) {
				return Optional.empty();
			}
			first = next;
			newest = newestDue(calendar.next(), first, now);
		}
		else {
			return Optional.empty();
		}
		Duration maxAge = this.missedTicks.maxAge();
		boolean young = maxAge == null || Duration.between(newest, now).compareTo(maxAge) <= 0;
		return Optional.of(new MissedTick(first, newest, this.missedTicks.catchUp() && young));
	}

	/** The newest instant of the calendar from {@code first} up to {@code now}. */
	private static Instant newestDue(JobSchedule.NextTick next, Instant first, Instant now) {
		Instant newest = first;
		for (Duration window : SEARCH_WINDOWS) {
			Instant start = now.minus(window);
			if (!start.isAfter(first)) {
				break;
			}
			Instant due = next.after(start);
			if (due != null && !due.isAfter(now)) {
				newest = due;
				break;
			}
		}
		for (Instant due = next.after(newest); due != null && !due.isAfter(now); due = next.after(due)) {
			newest = due;
		}
		return newest;
	}

	@Override
	public String toString() {
		return "job '" + this.name + "' of group '" + group() + "' (" + this.schedule + ")";
	}

}
