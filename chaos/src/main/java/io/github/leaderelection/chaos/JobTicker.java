package io.github.leaderelection.chaos;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.chaos.ChaosNode.BeliefMode;
import io.github.leaderelection.jobs.JobSchedule;
import io.github.leaderelection.jobs.LeaderOnlyJob;
import io.github.leaderelection.jobs.MissedTick;
import io.github.leaderelection.jobs.MissedTicks;
import org.jspecify.annotations.Nullable;

/**
 * A node's leader-only job, due at every whole second of the node's wall clock (which
 * {@code clock-jump} may move): each tick is the epoch millisecond of that second. The
 * ticker fires at each whole second; when the node believes it leads the job's group it
 * claims the tick through {@link LeaderOnlyJob#claim} and, when the claim succeeds, runs
 * the job (a little work) and records the run. When the node is granted the group (at its
 * grant's event, or at its first tick in the new term if that comes first), it asks
 * {@link LeaderOnlyJob#missedTick} for the ticks that passed unrun since the last
 * recorded run, and claims the newest of them as one catch-up run that stands for all of
 * them ({@link MissedTicks#runOnce()}). A store that fails a claim or that question does
 * not stop the node: the next fire asks again, as a careful integration would, so that
 * ticks lost to an error are caught up while the node keeps leading.
 *
 * <p>
 * A ticker that wakes late (its process paused or short of a core) fires every second it
 * slept through, in order, as a fixed-rate scheduler does; a wake more than
 * {@link #MAX_BURST} seconds late, or before the last second fired, is the wall clock
 * jumping, and the ticker goes on from the clock's new second, with a catch-up.
 *
 * <p>
 * With run records off (the control experiment) the node runs the job on every fire at
 * which it believes it leads, without claiming anything, as a plain scheduled method that
 * checks leadership does; on a grant it runs the current tick at once, the nearest a job
 * without records comes to a catch-up.
 *
 * <p>
 * The records ({@link EventLog}): {@code job-start} before each claim (a start without a
 * {@code job} line ended in a kill: its outcome is unknown), {@code job} with the claim's
 * outcome ({@code run}, {@code refused} or {@code error}), and {@code job-missed} with
 * what a catch-up found. A {@code job} line's {@code first} is its tick for a plain run,
 * the first missed tick for a catch-up.
 */
final class JobTicker {

	/** The job's name in its group. */
	static final String JOB = "chaos-tick";

	/** A tick every whole second. */
	static final long TICK_MILLIS = 1000;

	/** The most seconds a late wake fires; a later one is a clock jump. */
	static final int MAX_BURST = 10;

	/** Every whole second of the wall clock the tick is read on. */
	static final JobSchedule EVERY_SECOND = JobSchedule.calendar("every second", (after) -> Instant
		.ofEpochMilli(Math.floorDiv(after.toEpochMilli(), TICK_MILLIS) * TICK_MILLIS + TICK_MILLIS));

	private final LeaderElection election;

	private final @Nullable LeaderOnlyJob job;

	private final BeliefMode belief;

	/** By group, the term the node's flag says it leads in (flag belief). */
	private final Map<String, Long> flagTerms;

	private final EventLog log;

	private final long workMillis;

	/** Set by a grant: catch up at once. */
	private volatile boolean catchUpDue;

	/** Set by a store error: catch up at the next fire. */
	private boolean catchUpAgain;

	/** The term in which it last looked for ticks missed. */
	private long caughtUpTerm;

	private volatile @Nullable Thread thread;

	/** The runs this wake claimed, whose work is still to do. */
	private final List<Optional<RunRecord>> runs = new ArrayList<>();

	/**
	 * @param election the group whose leader runs the job
	 * @param records whether the job claims its ticks in the store's run records
	 * @param flagTerms the node's flag, read with flag belief
	 */
	JobTicker(LeaderElection election, boolean records, BeliefMode belief, Map<String, Long> flagTerms, EventLog log,
			long workMillis) {
		this.election = election;
		this.job = records ? new LeaderOnlyJob(election, JOB, EVERY_SECOND, MissedTicks.runOnce()) : null;
		this.belief = belief;
		this.flagTerms = flagTerms;
		this.log = log;
		this.workMillis = workMillis;
	}

	String group() {
		return this.election.group();
	}

	/** The node was granted the job's group: catch up at once. */
	void granted() {
		this.catchUpDue = true;
		Thread ticker = this.thread;
		if (ticker != null) {
			LockSupport.unpark(ticker);
		}
	}

	void run(BooleanSupplier running) {
		this.thread = Thread.currentThread();
		long last = second(System.currentTimeMillis());
		while (running.getAsBoolean()) {
			long current = second(System.currentTimeMillis());
			if (current < last || current > last + MAX_BURST * TICK_MILLIS) {
				this.log.write("job-clock", EventLog.now(), last, current, group());
				last = current - TICK_MILLIS;
				this.catchUpAgain = true;
			}
			if (this.job != null) {
				long term = believedTerm();
				if (term != 0 && term != this.caughtUpTerm) {
					// A term began: the ticks missed before it are looked for before this
					// tick is claimed, whether the grant's event has come yet or not (a
					// tick claimed first would make the ones before it unclaimable).
					this.catchUpDue = true;
				}
			}
			if (this.catchUpDue || this.catchUpAgain) {
				this.catchUpDue = false;
				this.catchUpAgain = false;
				last = Math.max(last, catchUp(current));
			}
			while (last < current) {
				last += TICK_MILLIS;
				fire(last, last, "plain");
			}
			finishRuns();
			long wait = last + TICK_MILLIS - System.currentTimeMillis();
			if (wait > 0 && !this.catchUpDue) {
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(wait));
			}
		}
	}

	/**
	 * Runs the ticks missed once, if the node leads; returns the tick run, or
	 * {@code Long.MIN_VALUE}.
	 */
	private long catchUp(long current) {
		if (this.job == null) {
			// No records, nothing to know what was missed by: the current tick at once.
			return fire(current, current, "plain") ? current : Long.MIN_VALUE;
		}
		long term = believedTerm();
		if (term == 0) {
			return Long.MIN_VALUE;
		}
		Optional<MissedTick> missed;
		try {
			missed = this.job.missedTick(Instant.now());
		}
		catch (RuntimeException ex) {
			this.log.write("job-missed", EventLog.now(), "-", "-", "error", group());
			this.catchUpAgain = true;
			return Long.MIN_VALUE;
		}
		this.caughtUpTerm = term;
		if (missed.isEmpty() || !missed.get().run()) {
			this.log.write("job-missed", EventLog.now(), "-", "-", "none", group());
			return Long.MIN_VALUE;
		}
		long first = missed.get().first().toEpochMilli();
		long newest = missed.get().newest().toEpochMilli();
		this.log.write("job-missed", EventLog.now(), first, newest, "found", group());
		return fire(newest, first, "catch-up") ? newest : Long.MIN_VALUE;
	}

	/** Claims and runs one tick if the node believes it leads; whether it ran. */
	private boolean fire(long tick, long first, String kind) {
		long term = believedTerm();
		if (term == 0) {
			return false;
		}
		if (this.job == null) {
			long t = EventLog.now();
			this.log.write("job-start", t, tick, first, term, kind, group());
			this.log.write("job", t, EventLog.now(), tick, first, term, kind, "run", group());
			this.runs.add(Optional.empty());
			return true;
		}
		long t0 = EventLog.now();
		this.log.write("job-start", t0, tick, first, term, kind, group());
		Optional<RunRecord> claimed;
		try {
			claimed = this.job.claim(Instant.ofEpochMilli(tick), Instant.now());
		}
		catch (RuntimeException ex) {
			this.log.write("job", t0, EventLog.now(), tick, first, term, kind, "error", group());
			// The claim may have landed; the next fire asks what the record says.
			this.catchUpAgain = true;
			return false;
		}
		long t1 = EventLog.now();
		if (claimed.isEmpty()) {
			this.log.write("job", t0, t1, tick, first, term, kind, "refused", group());
			return false;
		}
		this.log.write("job", t0, t1, tick, first, claimed.get().term(), kind, "run", group());
		this.runs.add(claimed);
		return true;
	}

	/**
	 * Does the work of the runs this wake claimed, and records their end. The fires a
	 * late wake owes come back to back, as a fixed-rate scheduler's overdue executions
	 * do, each asking whether the node leads; the work follows them.
	 */
	private void finishRuns() {
		if (this.runs.isEmpty()) {
			return;
		}
		work();
		for (Optional<RunRecord> run : this.runs) {
			if (run.isPresent() && this.job != null) {
				try {
					this.job.finish(run.get(), RunOutcome.SUCCEEDED, Instant.now());
				}
				catch (RuntimeException ex) {
					// The run happened; only its end is not recorded.
				}
			}
		}
		this.runs.clear();
	}

	/** The term the node believes it leads the group in, 0 if none. */
	private long believedTerm() {
		if (this.belief == BeliefMode.FLAG) {
			Long term = this.flagTerms.get(group());
			return (term != null) ? term : 0;
		}
		return this.election.leadership().map(Leadership::term).orElse(0L);
	}

	private void work() {
		if (this.workMillis > 0) {
			try {
				Thread.sleep(ThreadLocalRandom.current().nextLong(this.workMillis + 1));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private static long second(long millis) {
		return Math.floorDiv(millis, TICK_MILLIS) * TICK_MILLIS;
	}

}
