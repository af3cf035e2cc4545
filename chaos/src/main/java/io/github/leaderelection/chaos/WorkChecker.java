package io.github.leaderelection.chaos;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import io.github.leaderelection.chaos.Checker.GroupRecords;
import io.github.leaderelection.chaos.Checker.Incarnation;
import io.github.leaderelection.chaos.Checker.Interval;

/**
 * Checks the runs of the nodes' leader-only job ({@link JobTicker}), due every whole
 * second in the run's first group: no tick ran twice, and no tick was lost while the
 * group had a leader that could have run it.
 *
 * <h2>Ticks</h2>
 *
 * A tick is the epoch second the clock of the node that claimed it said (the store dates
 * a run by the claimer's clock). A plain run covers its tick; a catch-up run covers every
 * second from the first tick it was told was missed to its own tick. The store claims a
 * tick only when it is later than the job's last one, so every tick is covered once at
 * most, whatever the nodes' clocks say.
 *
 * <h2>Duplicates</h2>
 *
 * A duplicate is a tick covered by a second run (one tick run twice, or a catch-up
 * covering a tick that ran). Two runs whose claims are separated by a fault that loses
 * the store's data (see {@link #losesRunRecords}) are counted apart, as duplicates across
 * a data loss, and do not fail the run: the record that would have refused the second
 * claim was gone. So are those of a run claimed while such a fault was under way (a
 * restore written node by node), whose record the fault may have overwritten.
 *
 * <h2>Lost ticks</h2>
 *
 * Lost ticks are judged on the harness's clock (the run's reference time): every whole
 * second T after the job's first run up to the end of the run less the bound must be
 * covered by a run, where the bound is the longest leaderless bound of the run's timing
 * and store ({@link Liveness.Bounds}) plus one retry period. A tick that is not covered
 * is lost, and fails the run, unless:
 * <ul>
 * <li>a claim whose outcome is unknown may have covered it: the claim failed with an
 * error, or its node died during it (the store may have written it, and a claim is never
 * run after the fact: the library's documented way to lose a tick);</li>
 * <li>it lies between the last tick claimed before a fault that loses the store's data
 * and the first tick claimed after it: the record of the last run was gone, so the next
 * leader could not know what was missed;</li>
 * <li>no instance led the group, after T plus the bound, for long enough to catch up (a
 * tick and two store calls) while its own wall clock read at least T plus the bound: the
 * run ended first, or only an instance whose clock was behind (a {@code clock-jump}) led,
 * which cannot know that T is due. An instance with a true clock that leads after T has
 * either fired T or caught up on its grant.</li>
 * </ul>
 * A clock that jumped ahead claims the seconds it jumped over with a catch-up run, so the
 * ticks of the reference time it passed are covered, before they are due; the store
 * refuses the others' claims until their clocks pass the last tick it claimed. A plain
 * run of such a clock claims one tick ahead, which makes every second of the reference
 * time up to it unclaimable for the same reason. Both count as covered ahead, apart
 * ({@code coveredAhead}): the limit the library documents, not a lost tick.
 */
final class WorkChecker {

	/** What a claim came to. */
	private static final int RUN = 1;

	private static final int UNKNOWN = -2;

	private static final int ERROR = -1;

	/**
	 * The job's runs, and the ticks it lost.
	 *
	 * @param runs runs of the job (claims that succeeded; with run records off, every
	 * run)
	 * @param catchUps of them, catch-up runs
	 * @param ticksCovered seconds of the reference time checked that a run covered
	 * @param coveredAhead of them, those that only runs claimed before the second came
	 * covered: a clock ahead claimed them, and the others' claims were refused until
	 * their clocks got there
	 * @param duplicates ticks covered by a second run, between two data losses
	 * @param duplicatesAcrossDataLoss ticks covered again after the store lost its data
	 * @param lost ticks lost (see the class doc), in seconds from the run's start
	 * @param uncertain ticks not covered that a claim of unknown outcome may have covered
	 * @param lostWithData ticks not covered because the store lost its data
	 * @param boundMillis how old a tick must be to be judged
	 */
	record Result(long runs, long catchUps, long ticksCovered, long coveredAhead, long duplicates,
			long duplicatesAcrossDataLoss, List<Long> lost, long uncertain, long lostWithData, long boundMillis) {

		static final Result NONE = new Result(0, 0, 0, 0, 0, 0, List.of(), 0, 0, 0);

	}

	/** A claim of a tick: who, when (nanoTime), which seconds, how it ended. */
	record Claim(String key, long start, long tick, long first, int outcome, boolean catchUp) {

		/** The first second it covers. */
		long from() {
			return Math.floorDiv(this.first, JobTicker.TICK_MILLIS);
		}

		/** The last second it covers. */
		long to() {
			return Math.floorDiv(this.tick, JobTicker.TICK_MILLIS);
		}

	}

	private final Checker.Run run;

	private final ChaosSettings settings;

	private final String group;

	private final List<Interval> leading;

	private final List<Claim> claims = new ArrayList<>();

	private WorkChecker(Checker.Run run, ChaosSettings settings, List<Interval> leading) {
		this.run = run;
		this.settings = settings;
		this.group = settings.groupNames().get(0);
		this.leading = leading;
		for (Incarnation node : run.incarnations.values()) {
			GroupRecords records = node.groups.get(this.group);
			if (records == null) {
				continue;
			}
			for (long[] job : records.jobs) {
				this.claims.add(new Claim(node.key, job[0], job[2], job[3], (int) job[5], job[6] == 1));
			}
			for (long[] start : records.jobStarts) {
				boolean ended = records.jobs.stream().anyMatch((job) -> job[0] == start[0] && job[2] == start[1]);
				if (!ended) {
					this.claims.add(new Claim(node.key, start[0], start[1], start[2], UNKNOWN, start[4] == 1));
				}
			}
		}
		this.claims.sort(Comparator.comparingLong(Claim::start));
	}

	/**
	 * Checks the job of a run.
	 * @param intervals by group, the belief intervals the checker computed
	 */
	static Result check(Checker.Run run, ChaosSettings settings, Map<String, List<Interval>> intervals) {
		WorkChecker checker = new WorkChecker(run, settings,
				intervals.getOrDefault(settings.groupNames().get(0), List.of()));
		return checker.result();
	}

	/**
	 * Whether a fault of this type loses the run records on this store:
	 * {@code lose-store-data} everywhere; a restart of Redis, which runs without
	 * persistence; a failover of Redis Sentinel, whose replica may lack the master's
	 * newest writes. The other stores keep every committed write through a restart or a
	 * failover (the replicated databases acknowledge a commit once the replica has it).
	 */
	static boolean losesRunRecords(Backend backend, String faultType) {
		return faultType.equals(FaultType.LOSE_STORE_DATA.id())
				|| (backend == Backend.REDIS && faultType.equals(FaultType.RESTART_STORE.id()))
				|| (backend == Backend.REDIS_SENTINEL && faultType.equals(FaultType.FAILOVER_STORE.id()));
	}

	private Result result() {
		List<Claim> runs = this.claims.stream().filter((claim) -> claim.outcome() == RUN).toList();
		if (runs.isEmpty()) {
			return Result.NONE;
		}
		List<long[]> losses = this.run.faults.stream()
			.filter((fault) -> losesRunRecords(this.settings.backend(), fault[0]))
			.map((fault) -> new long[] { Long.parseLong(fault[1]), Long.parseLong(fault[2]) })
			.sorted(Comparator.comparingLong((long[] loss) -> loss[0]))
			.toList();
		// Duplicates: the seconds covered more than once, within each span between two
		// data losses, and in all. A run claimed while a loss was being written (a
		// restore
		// writes node by node) belongs to no span: the loss may have overwritten its
		// record after it, or the record before it.
		long withinEpochs = 0;
		for (int epoch = 0; epoch <= losses.size(); epoch++) {
			int current = epoch;
			withinEpochs += extraCoverage(runs.stream()
				.filter((claim) -> epoch(claim, losses) == current && !duringLoss(claim, losses))
				.toList());
		}
		long overall = extraCoverage(runs);
		List<long[]> covered = union(runs);
		List<long[]> uncertain = union(this.claims.stream()
			.filter((claim) -> claim.outcome() == ERROR || claim.outcome() == UNKNOWN)
			.toList());
		List<long[]> lostWithData = new ArrayList<>();
		for (long[] loss : losses) {
			long before = runs.stream()
				.filter((claim) -> claim.start() < loss[0])
				.mapToLong(Claim::to)
				.max()
				.orElse(Long.MIN_VALUE);
			// The runs are in the order of their claims: the first after the loss.
			long after = runs.stream()
				.filter((claim) -> claim.start() > loss[1])
				.mapToLong(Claim::from)
				.findFirst()
				.orElse(Long.MAX_VALUE);
			if (after - before > 1) {
				lostWithData.add(new long[] { before + 1, after - 1 });
			}
		}
		long bound = boundNanos();
		// A run that claimed a tick ahead of the reference clock (a node whose clock
		// jumped
		// forward) makes every second up to it unclaimable, those still within their
		// bound
		// when it claimed included: the store refuses a tick not later than the last.
		// Those seconds count as covered ahead, the limit the library documents (a clock
		// ahead keeps the job from running elsewhere until real time catches up), not as
		// lost.
		long boundSeconds = Math.floorDiv(bound / 1_000_000 + JobTicker.TICK_MILLIS - 1, JobTicker.TICK_MILLIS);
		List<long[]> blocked = spans(runs.stream()
			.filter((claim) -> claim.to() > referenceSecond(claim.start()) + 1)
			.map((claim) -> new long[] { referenceSecond(claim.start()) - boundSeconds, claim.to() })
			.toList());
		long first = referenceSecond(runs.get(0).start()) + 1;
		long last = Math.floorDiv(referenceMillis(this.run.end - bound), JobTicker.TICK_MILLIS);
		long ticksCovered = 0;
		long coveredAhead = 0;
		long uncertainTicks = 0;
		long lostWithDataTicks = 0;
		List<Long> lost = new ArrayList<>();
		for (long second = first; second <= last; second++) {
			if (contains(covered, second)) {
				ticksCovered++;
				if (!coveredWhenDue(runs, second)) {
					coveredAhead++;
				}
			}
			else if (contains(blocked, second)) {
				ticksCovered++;
				coveredAhead++;
			}
			else if (contains(uncertain, second)) {
				uncertainTicks++;
			}
			else if (contains(lostWithData, second)) {
				lostWithDataTicks++;
			}
			else if (ledAfter(second, bound)) {
				lost.add(second * JobTicker.TICK_MILLIS - this.run.startWall);
			}
		}
		return new Result(runs.size(), runs.stream().filter(Claim::catchUp).count(), ticksCovered, coveredAhead,
				withinEpochs, overall - withinEpochs, lost, uncertainTicks, lostWithDataTicks, bound / 1_000_000);
	}

	/**
	 * The leaderless bound of the run's timing and store, the longest of every fault's it
	 * drew, plus one retry period: a tick older than that was due while the group had, or
	 * had to have, a leader.
	 */
	long boundNanos() {
		Liveness.Bounds bounds = Liveness.Bounds.of(this.settings);
		boolean restored = this.run.faults.stream().anyMatch((fault) -> Liveness.Fault.isRestore(fault[0], fault[4]));
		long leaderless = Math.max(Math.max(bounds.crash(), bounds.workingLink()),
				restored ? bounds.restoredData() : bounds.lostData());
		leaderless = Math.max(leaderless, bounds.sessionReconnect() + 2 * bounds.retry());
		return leaderless + bounds.holdBack() + bounds.retry();
	}

	/**
	 * Whether a run claimed once the second was due covers it, give or take half a tick
	 * (the harness's clock and the nodes' true ones may drift apart by milliseconds).
	 */
	private boolean coveredWhenDue(List<Claim> runs, long second) {
		long due = second * JobTicker.TICK_MILLIS - JobTicker.TICK_MILLIS / 2;
		return runs.stream()
			.anyMatch(
					(claim) -> claim.from() <= second && second <= claim.to() && referenceMillis(claim.start()) >= due);
	}

	/**
	 * Whether an instance led the group for a tick and two store calls (long enough to
	 * fire the tick or catch it up) after the tick plus the bound, while its wall clock
	 * read at least the tick plus the bound.
	 */
	private boolean ledAfter(long second, long bound) {
		long due = this.run.start + (second * JobTicker.TICK_MILLIS - this.run.startWall) * 1_000_000;
		long allowance = (JobTicker.TICK_MILLIS * 1_000_000) + 2 * this.settings.longest().retryPeriod().toNanos();
		for (Interval interval : this.leading) {
			long from = Math.max(interval.start(), due + bound);
			long until = Math.min(interval.end(), this.run.end) - allowance;
			if (until >= from
					&& nodeClockMillis(interval.key(), until) >= second * JobTicker.TICK_MILLIS + bound / 1_000_000) {
				return true;
			}
		}
		return false;
	}

	/**
	 * What a node's wall clock read at an instant: the reference time plus the offset its
	 * last clock record before it showed.
	 */
	private long nodeClockMillis(String key, long at) {
		Incarnation node = this.run.incarnations.get(key);
		long offset = 0;
		if (node != null) {
			for (long[] clock : node.clocks) {
				if (clock[0] > at) {
					break;
				}
				offset = clock[1] - referenceMillis(clock[0]);
			}
		}
		return referenceMillis(at) + offset;
	}

	private long referenceMillis(long nanos) {
		return this.run.startWall + Math.floorDiv(nanos - this.run.start, 1_000_000);
	}

	private long referenceSecond(long nanos) {
		return Math.floorDiv(referenceMillis(nanos), JobTicker.TICK_MILLIS);
	}

	/** How many data losses began before the claim. */
	private static int epoch(Claim claim, List<long[]> losses) {
		return (int) losses.stream().filter((loss) -> loss[0] < claim.start()).count();
	}

	private static boolean duringLoss(Claim claim, List<long[]> losses) {
		return losses.stream().anyMatch((loss) -> loss[0] < claim.start() && claim.start() < loss[1]);
	}

	/** The seconds the claims cover beyond the first time. */
	private static long extraCoverage(List<Claim> claims) {
		long total = claims.stream().mapToLong((claim) -> claim.to() - claim.from() + 1).sum();
		long distinct = union(claims).stream().mapToLong((span) -> span[1] - span[0] + 1).sum();
		return total - distinct;
	}

	/** The seconds the claims cover, as sorted, disjoint, inclusive spans. */
	private static List<long[]> union(List<Claim> claims) {
		return spans(claims.stream().map((claim) -> new long[] { claim.from(), claim.to() }).toList());
	}

	/** Inclusive spans of seconds merged into sorted, disjoint ones. */
	private static List<long[]> spans(List<long[]> ranges) {
		List<long[]> spans = new ArrayList<>();
		ranges.stream().sorted(Comparator.comparingLong((long[] range) -> range[0])).forEach((range) -> {
			long[] last = spans.isEmpty() ? null : spans.get(spans.size() - 1);
			if (last != null && range[0] <= last[1] + 1) {
				last[1] = Math.max(last[1], range[1]);
			}
			else {
				spans.add(new long[] { range[0], range[1] });
			}
		});
		return spans;
	}

	private static boolean contains(List<long[]> spans, long second) {
		int low = 0;
		int high = spans.size() - 1;
		while (low <= high) {
			int middle = (low + high) >>> 1;
			long[] span = spans.get(middle);
			if (second < span[0]) {
				high = middle - 1;
			}
			else if (second > span[1]) {
				low = middle + 1;
			}
			else {
				return true;
			}
		}
		return false;
	}

}
