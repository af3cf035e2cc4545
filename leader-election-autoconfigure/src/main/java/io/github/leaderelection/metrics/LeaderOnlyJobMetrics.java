package io.github.leaderelection.metrics;

import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.scheduling.JobStats;
import io.github.leaderelection.scheduling.ScheduledJob;
import io.github.leaderelection.scheduling.ScheduledJobs;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * The meters of the scheduled leader-only methods, all tagged with {@code group} and
 * {@code job}, counting what this instance did:
 * <ul>
 * <li>{@code leader.election.job.runs} (counter): runs claimed, by {@code outcome}
 * ({@code succeeded}, {@code failed}, {@code cancelled});</li>
 * <li>{@code leader.election.job.ticks.caught.up} (counter): catch-up runs, each for all
 * the ticks found missed when this instance took over;</li>
 * <li>{@code leader.election.job.ticks.skipped} (counter): ticks not run, by
 * {@code reason}: {@code already-run} (claimed before, here or elsewhere), {@code missed}
 * (missed and skipped by the policy or their age), {@code claim-failed} (the store did
 * not answer);</li>
 * <li>{@code leader.election.job.claims} (timer): the claims of ticks in the store.</li>
 * </ul>
 */
class LeaderOnlyJobMetrics implements MeterBinder {

	static final String RUNS = "leader.election.job.runs";

	static final String CAUGHT_UP = "leader.election.job.ticks.caught.up";

	static final String SKIPPED = "leader.election.job.ticks.skipped";

	static final String CLAIMS = "leader.election.job.claims";

	private final ScheduledJobs jobs;

	LeaderOnlyJobMetrics(ScheduledJobs jobs) {
		this.jobs = Objects.requireNonNull(jobs, "jobs");
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.jobs.forEachJob((job) -> bind(job, registry));
	}

	private static void bind(ScheduledJob job, MeterRegistry registry) {
		Tags tags = Tags.of("group", job.job().group(), "job", job.job().name());
		JobStats stats = job.stats();
		for (RunOutcome outcome : RunOutcome.values()) {
			if (outcome != RunOutcome.RUNNING) {
				counter(registry, RUNS, "Runs of a leader-only job this instance claimed, by how they ended", stats,
						(s) -> s.runs(outcome), tags.and("outcome", outcome.name().toLowerCase(Locale.ROOT)));
			}
		}
		counter(registry, CAUGHT_UP, "Catch-up runs for the ticks missed while no instance led", stats,
				JobStats::caughtUp, tags);
		counter(registry, SKIPPED, "Ticks of a leader-only job this instance did not run", stats,
				JobStats::skippedAsAlreadyRun, tags.and("reason", "already-run"));
		counter(registry, SKIPPED, "Ticks of a leader-only job this instance did not run", stats,
				JobStats::missedSkipped, tags.and("reason", "missed"));
		counter(registry, SKIPPED, "Ticks of a leader-only job this instance did not run", stats,
				JobStats::claimFailures, tags.and("reason", "claim-failed"));
		FunctionTimer.builder(CLAIMS, stats, JobStats::claims, JobStats::claimNanos, TimeUnit.NANOSECONDS)
			.description("Claims of a leader-only job's ticks in the store")
			.tags(tags)
			.register(registry);
	}

	private static void counter(MeterRegistry registry, String name, String description, JobStats stats,
			ToDoubleFunction<JobStats> count, Tags tags) {
		FunctionCounter.builder(name, stats, count).description(description).tags(tags).register(registry);
	}

}
