package io.github.leaderelection.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonInclude.Include;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.RunRecords;
import io.github.leaderelection.scheduling.JobStats;
import io.github.leaderelection.scheduling.ScheduledJob;
import io.github.leaderelection.scheduling.ScheduledJobs;
import org.jspecify.annotations.Nullable;

/**
 * The scheduled leader-only methods of a group as operators see them: each one's last run
 * in the group (read from the store, whichever instance ran it), and what this instance
 * did of it.
 */
final class JobsView {

	private final ScheduledJobs jobs;

	JobsView(ScheduledJobs jobs) {
		this.jobs = jobs;
	}

	/**
	 * The jobs of a group, their last runs read from the store one after another while
	 * {@code budget} lasts (each read within the store call timeout): a job read after it
	 * ran out shows why instead. Then, if the budget still lasts, the runs recorded under
	 * other names ({@link #others}).
	 */
	GroupJobs of(LeaderElection election, Duration budget) {
		long deadline = System.nanoTime() + budget.toNanos();
		List<JobDescriptor> described = this.jobs.jobs()
			.stream()
			.filter((job) -> job.job().group().equals(election.group()))
			.map((job) -> describe(job, deadline))
			.toList();
		boolean inTime = System.nanoTime() - deadline < 0;
		return new GroupJobs(described, inTime ? others(election, described) : List.of());
	}

	private static JobDescriptor describe(ScheduledJob job, long deadline) {
		RunDescriptor lastRun = null;
		String lastRunError = null;
		if (System.nanoTime() - deadline >= 0) {
			lastRunError = "Not read: this read of the endpoint spent its time on the store already";
		}
		else {
			try {
				lastRun = job.job().lastRun().map(RunDescriptor::of).orElse(null);
			}
			catch (RuntimeException ex) {
				lastRunError = ex.getMessage();
			}
		}
		JobStats stats = job.stats();
		Map<String, Long> runs = new LinkedHashMap<>();
		for (RunOutcome outcome : RunOutcome.values()) {
			if (outcome != RunOutcome.RUNNING) {
				runs.put(outcome.name().toLowerCase(Locale.ROOT), stats.runs(outcome));
			}
		}
		return new JobDescriptor(job.job().name(), job.method(), job.job().schedule().toString(),
				job.job().missedTicks().toString(), lastRun, lastRunError, runs, stats.caughtUp(),
				text(stats.lastCatchUp()), stats.skippedAsAlreadyRun(), stats.missedSkipped(),
				text(stats.lastSkippedTick()), stats.claimFailures(),
				job.nextTick().map(Instant::toString).orElse(null));
	}

	private static @Nullable String text(@Nullable Instant instant) {
		return (instant != null) ? instant.toString() : null;
	}

	/**
	 * The runs the store records in a group under job names that none of this instance's
	 * scheduled methods has: left by a method renamed or removed since, or by one that
	 * only another version of the application has. Nothing here runs them or catches them
	 * up; they are listed so that an operator can tell. Left out when the store does not
	 * answer.
	 */
	private static List<OtherJobDescriptor> others(LeaderElection election, List<JobDescriptor> jobs) {
		Set<String> known = jobs.stream().map(JobDescriptor::job).collect(Collectors.toSet());
		try {
			return election.runRecords()
				.map(RunRecords::all)
				.orElse(List.of())
				.stream()
				.filter((run) -> !known.contains(run.job()))
				.map((run) -> new OtherJobDescriptor(run.job(), RunDescriptor.of(run)))
				.toList();
		}
		catch (RuntimeException ex) {
			return List.of();
		}
	}

	/** A group's jobs, and the runs recorded under other names. */
	record GroupJobs(List<JobDescriptor> jobs, List<OtherJobDescriptor> others) {

		static final GroupJobs NONE = new GroupJobs(List.of(), List.of());

	}

	/**
	 * A job whose runs the store records in a group, which no scheduled method of this
	 * instance runs.
	 *
	 * @param job its name in the group
	 * @param lastRun its last run as recorded
	 */
	public record OtherJobDescriptor(String job, RunDescriptor lastRun) {

	}

	/**
	 * A scheduled leader-only method of a group.
	 *
	 * @param job its name in the group, {@code <bean name>.<method name>}
	 * @param method the method
	 * @param schedule when it is due
	 * @param missedTicks what the next leader does with the ticks missed
	 * @param lastRun its last run in the group, by whichever instance, from the store;
	 * {@code null} if it never ran or the store did not answer
	 * @param lastRunError why the last run could not be read, if it could not
	 * @param runs the runs this instance claimed, by how they ended
	 * @param caughtUp catch-up runs this instance claimed
	 * @param lastCatchUp the tick of the last of them
	 * @param skippedAsAlreadyRun ticks this instance fired while leading and did not run,
	 * as already claimed
	 * @param missedSkipped times this instance found ticks missed and skipped them
	 * @param lastSkippedTick the newest tick it last skipped so
	 * @param claimFailures ticks not run because the store did not answer their claim
	 * @param nextTick when this instance's scheduler fires the method next
	 */
	public record JobDescriptor(String job, String method, String schedule, String missedTicks,
			@Nullable RunDescriptor lastRun, @JsonInclude(Include.NON_NULL) @Nullable String lastRunError,
			Map<String, Long> runs, long caughtUp, @JsonInclude(Include.NON_NULL) @Nullable String lastCatchUp,
			long skippedAsAlreadyRun, long missedSkipped,
			@JsonInclude(Include.NON_NULL) @Nullable String lastSkippedTick, long claimFailures,
			@Nullable String nextTick) {

	}

	/**
	 * A run as the store records it.
	 *
	 * @param tick the instant it was due (ISO-8601)
	 * @param holder the candidate that ran it
	 * @param term the term it ran in
	 * @param started when it started
	 * @param duration how long it took (ISO-8601), {@code null} while running or if its
	 * leader stopped before it could say
	 * @param outcome {@code RUNNING}, {@code SUCCEEDED}, {@code FAILED} or
	 * {@code CANCELLED}
	 */
	public record RunDescriptor(String tick, String holder, long term, String started, @Nullable String duration,
			String outcome) {

		static RunDescriptor of(RunRecord run) {
			Instant ended = run.ended();
			return new RunDescriptor(Instant.ofEpochMilli(run.tick()).toString(), run.holder(), run.term(),
					run.started().toString(),
					(ended != null) ? Duration.between(run.started(), ended).toString() : null, run.outcome().name());
		}

	}

}
