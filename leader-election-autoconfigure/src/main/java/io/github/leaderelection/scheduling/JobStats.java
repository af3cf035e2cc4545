package io.github.leaderelection.scheduling;

import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import org.jspecify.annotations.Nullable;

/**
 * What this instance saw of one scheduled leader-only method: its runs by outcome, the
 * ticks it caught up and the ticks it did not run, and what its claims cost. Read by the
 * endpoint and the metrics.
 */
public final class JobStats {

	private final Map<RunOutcome, LongAdder> runs = new EnumMap<>(RunOutcome.class);

	private final LongAdder caughtUp = new LongAdder();

	private final LongAdder alreadyRun = new LongAdder();

	private final LongAdder missedSkipped = new LongAdder();

	private final LongAdder claimFailures = new LongAdder();

	private final LongAdder claims = new LongAdder();

	private final LongAdder claimNanos = new LongAdder();

	private volatile @Nullable Instant lastCatchUp;

	private volatile @Nullable Instant lastSkippedTick;

	JobStats() {
		for (RunOutcome outcome : RunOutcome.values()) {
			this.runs.put(outcome, new LongAdder());
		}
	}

	void claimed(long nanos) {
		this.claims.increment();
		this.claimNanos.add(nanos);
	}

	void claimFailed(long nanos) {
		claimed(nanos);
		this.claimFailures.increment();
	}

	void alreadyRun() {
		this.alreadyRun.increment();
	}

	void caughtUp(RunRecord run) {
		this.caughtUp.increment();
		this.lastCatchUp = Instant.ofEpochMilli(run.tick());
	}

	void missedSkipped(Instant newest) {
		this.missedSkipped.increment();
		this.lastSkippedTick = newest;
	}

	void ended(RunOutcome outcome) {
		this.runs.get(outcome).increment();
	}

	/**
	 * Runs this instance claimed that ended a given way.
	 * @param outcome how they ended
	 * @return how many
	 */
	public long runs(RunOutcome outcome) {
		return this.runs.get(outcome).sum();
	}

	/** Catch-up runs this instance claimed, one for all the ticks it found missed. */
	public long caughtUp() {
		return this.caughtUp.sum();
	}

	/**
	 * Ticks this instance's scheduler fired while it led that it did not run because they
	 * (or one too close before them) were already claimed.
	 */
	public long skippedAsAlreadyRun() {
		return this.alreadyRun.sum();
	}

	/**
	 * Times this instance found ticks missed and skipped them, as its policy or their age
	 * said.
	 */
	public long missedSkipped() {
		return this.missedSkipped.sum();
	}

	/** Ticks not run because their claim failed (the store did not answer). */
	public long claimFailures() {
		return this.claimFailures.sum();
	}

	/** Claims made, successful or not. */
	public long claims() {
		return this.claims.sum();
	}

	/** Total time spent in claims, in nanoseconds. */
	public long claimNanos() {
		return this.claimNanos.sum();
	}

	/** The tick of this instance's last catch-up run, if any. */
	public @Nullable Instant lastCatchUp() {
		return this.lastCatchUp;
	}

	/** The newest tick this instance last skipped as missed, if any. */
	public @Nullable Instant lastSkippedTick() {
		return this.lastSkippedTick;
	}

}
