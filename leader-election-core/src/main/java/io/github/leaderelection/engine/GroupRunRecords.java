package io.github.leaderelection.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.RunRecords;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.RunRecordStore;

/**
 * One group's run records, through a store that keeps them: a claim names the lease the
 * group's state holds now, so the store fences it as it fences a renewal.
 */
final class GroupRunRecords implements RunRecords {

	private final String group;

	private final String candidateId;

	private final RunRecordStore store;

	private final Supplier<Optional<Lease>> leaseWhileLeading;

	private final Duration callTimeout;

	private final CallerCalls calls;

	/**
	 * @param leaseWhileLeading the lease this instance leads the group under at the
	 * instant asked, or empty
	 */
	GroupRunRecords(String group, String candidateId, RunRecordStore store, Supplier<Optional<Lease>> leaseWhileLeading,
			Duration callTimeout, CallerCalls calls) {
		this.group = group;
		this.candidateId = candidateId;
		this.store = store;
		this.leaseWhileLeading = leaseWhileLeading;
		this.callTimeout = callTimeout;
		this.calls = calls;
	}

	@Override
	public Optional<RunRecord> lastRun(String job) {
		Names.requireValid("job", job);
		return this.calls.call("read the last run of job '" + job + "'",
				() -> this.store.lastRun(this.group, job, this.callTimeout));
	}

	@Override
	public List<RunRecord> all() {
		return this.calls.call("read the last runs of the jobs", () -> this.store.runs(this.group, this.callTimeout));
	}

	@Override
	public Optional<RunRecord> claim(String job, long tick, Instant started, Duration minInterval) {
		Names.requireValid("job", job);
		Optional<Lease> lease = this.leaseWhileLeading.get();
		if (lease.isEmpty()) {
			return Optional.empty();
		}
		RunRecord run = new RunRecord(this.group, job, tick, this.candidateId, lease.get().term(), started, null,
				RunOutcome.RUNNING);
		boolean claimed = this.calls.call("claim tick " + tick + " of job '" + job + "'",
				() -> this.store.claimRun(lease.get(), run, minInterval, this.callTimeout));
		return claimed ? Optional.of(run) : Optional.empty();
	}

	@Override
	public boolean finish(RunRecord run, RunOutcome outcome, Instant ended) {
		return this.calls.call("record the end of tick " + run.tick() + " of job '" + run.job() + "'",
				() -> this.store.finishRun(run.endedAs(outcome, ended), this.callTimeout));
	}

}
