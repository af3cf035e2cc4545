package io.github.leaderelection.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.chaos.ChaosNode.BeliefMode;

/**
 * Reads the records of a run and measures it: overlapping beliefs, actions outside a
 * belief, terms that went backwards or were used twice, stale writes, failover times and
 * the share of time with a leader; and, through {@link WorkChecker}, the runs of the
 * leader-only job.
 *
 * <h2>What a belief interval is, and why the count of overlaps is sound</h2>
 *
 * A node believes it leads in term T from the instant {@code leadership()} would first
 * answer T until the last instant it would, whether or not anything asked; a paused or
 * dead process answers nothing but is still given its belief until its deadline. The
 * checker never needs that instant exactly: it computes for every (node, term) an
 * interval {@code [S, E]} that provably contains the belief, so that two beliefs that
 * overlapped always give two intervals that overlap. Zero overlapping intervals thus
 * proves zero overlapping beliefs; an overlap found may, in principle, be a false alarm
 * of at most the slack of the bounds (microseconds, see below).
 * <ul>
 * <li>{@code S}: the end of the acquire call that returned term T (the engine grants only
 * after it returned), plus the lease's {@code activeIn} when positive (the engine grants
 * a lease taken over early only after that wait, counted from after the call on its
 * election clock, which the checker runs at the rates the node recorded).</li>
 * <li>{@code E}: the earliest of (a) the start of the latest acquire or renew call of
 * term T whose outcome was success or is unknown (the node died during it), plus the
 * renew deadline on the node's election clock (the engine counts its deadline from a
 * moment no later than that start, and {@code isLeader()} compares it at call time; a
 * clock that {@code skew-leader} slowed takes longer to get there, so the checker runs it
 * at the rates the node recorded); (b) the time the revoked event for T was recorded (the
 * engine stops believing before it publishes it); (c) the start of a release of the lease
 * of term T (the engine releases only after it stopped believing); (d) the time the
 * process was seen dead.</li>
 * </ul>
 * The bounds rest on two rules of the engine, so the checker verifies them against what
 * the node observed: every sample of the 1 ms probe that saw T, every check that allowed
 * an action in T, and the granted event of T must fall inside {@code [S, E]} (the probe
 * sample and the check are intervals of time themselves: they must intersect it; the
 * granted event must not precede S). A miss is counted as {@code unexplainedBeliefs}
 * (probe, grant) or {@code actionsOutsideBelief} (actions), and fails the run like an
 * overlap.
 *
 * <p>
 * With {@code flag} belief (the control experiment), a node believes what its flag says:
 * from the granted event (time read before the flag was set) to the revoked event (time
 * read after it was cleared) or its death.
 *
 * <p>
 * Overlaps are counted between intervals of different processes (a node killed and
 * started again is a new process with a new candidate id): {@code overlaps} is the number
 * of overlapping pairs, {@code overlapMillis} the time during which two or more processes
 * believed.
 *
 * <h2>Several groups</h2>
 *
 * Every record about an election names its group, and each group is judged on its own,
 * exactly as the one group of a run with one group: its intervals (by process, group and
 * term), its overlaps, its terms (each group counts its own), its actions against its
 * intervals, its accepted writes against its fence, its intervals without a leader. The
 * counts of the summary add the groups up; availability is their mean, the longest
 * leaderless time their maximum. A renewal in a batch is recorded as a renewal of each of
 * its leases, all started when the batch started (the engine counts every belief the
 * batch extends from before that).
 */
final class Checker {

	private Checker() {
	}

	/** One belief of one process in one group, with its bounds. */
	record Interval(String key, String group, long term, long start, long end) {
	}

	static ChaosSummary check(Path directory, ChaosSettings settings) throws IOException {
		Run run = Run.read(directory);
		return new Checker.Analysis(run, settings).summary();
	}

	// The records

	/** The records of one process. */
	static final class Incarnation {

		final String key;

		BeliefMode belief = BeliefMode.LIBRARY;

		long renewDeadline;

		long death = Long.MAX_VALUE;

		/** When its election started: from then on it can take over. */
		long ready = Long.MAX_VALUE;

		/** Its records about each group's election, by group. */
		final Map<String, GroupRecords> groups = new TreeMap<>();

		final List<long[]> clocks = new ArrayList<>(); // t, wall

		final List<long[]> stalls = new ArrayList<>(); // from, to

		/** The rate of its election clock from each instant on (skew-leader). */
		final TreeMap<Long, Double> clockRates = new TreeMap<>();

		Incarnation(String key) {
			this.key = key;
		}

		GroupRecords group(String group) {
			return this.groups.computeIfAbsent(group, (name) -> new GroupRecords());
		}

		/**
		 * When this node's election clock, running at the rates it recorded (1 before the
		 * first), has advanced by a duration from an instant: a deadline it counts from
		 * that instant, in real time. Rounded up, so that it stays a bound.
		 */
		long afterOnItsClock(long from, long nanos) {
			Map.Entry<Long, Double> current = this.clockRates.floorEntry(from);
			double rate = (current != null) ? current.getValue() : 1.0;
			double left = nanos;
			long time = from;
			for (Map.Entry<Long, Double> next : this.clockRates.tailMap(from, false).entrySet()) {
				double span = (next.getKey() - time) * rate;
				if (left <= span) {
					break;
				}
				left -= span;
				time = next.getKey();
				rate = next.getValue();
			}
			return time + (long) Math.ceil(left / rate);
		}

	}

	/** The records of one process about one group's election. */
	static final class GroupRecords {

		final List<long[]> acquires = new ArrayList<>(); // entry, exit, term, activeIn

		/**
		 * entry -> term, outcome (1 ok, 0 no, -1 unknown, -2 error); a batch renews a
		 * group's lease once, so the entries of a group are distinct.
		 */
		final Map<Long, long[]> renewsByEntry = new HashMap<>();

		final Map<Long, Long> granted = new HashMap<>(); // term -> first granted time

		final Map<Long, Long> revoked = new HashMap<>(); // term -> first revoked time

		final Map<Long, String> revocationReasons = new HashMap<>(); // term -> reason

		final Map<Long, Long> released = new HashMap<>(); // term -> first release call

		final List<long[]> releaseEnds = new ArrayList<>(); // t, term: releases that
															// returned

		final List<long[]> probes = new ArrayList<>(); // p0, p1, t0, t1, from, to

		final List<long[]> rogueWrites = new ArrayList<>(); // w0, w1, term, outcome (1
															// accepted, 0 refused, -1
															// error)

		final List<long[]> actions = new ArrayList<>(); // c0, c1, term, w0, w1, outcome(1
														// accepted, 0 refused, -1 error)

		/** The leader-only job's claims: t, tick, first, term, catch-up (1) or not. */
		final List<long[]> jobStarts = new ArrayList<>();

		/**
		 * Their outcomes: t0, t1, tick, first, term, outcome (1 run, 0 refused, -1
		 * error), catch-up (1) or not.
		 */
		final List<long[]> jobs = new ArrayList<>();

	}

	/** All the records of a run. */
	static final class Run {

		long start;

		long startWall;

		long end = Long.MIN_VALUE;

		final Map<String, Incarnation> incarnations = new TreeMap<>();

		final List<String[]> faults = new ArrayList<>(); // type, t0, t1, target, detail

		/** Accepted writes, by group: id, term. */
		final Map<String, List<long[]>> writes = new TreeMap<>();

		/** By group, then term: the processes whose writes in that term were accepted. */
		final Map<String, Map<Long, Set<String>>> writers = new TreeMap<>();

		int skipped;

		int unexpectedExits;

		static Run read(Path directory) throws IOException {
			Run run = new Run();
			try (Stream<Path> files = Files.list(directory)) {
				for (Path file : files.filter((path) -> path.getFileName().toString().matches("node-.*\\.log"))
					.sorted()
					.toList()) {
					run.readNode(file);
				}
			}
			run.readHarness(directory.resolve("harness.log"));
			return run;
		}

		Incarnation incarnation(String key) {
			return this.incarnations.computeIfAbsent(key, Incarnation::new);
		}

		private void readNode(Path file) throws IOException {
			String name = file.getFileName().toString();
			Incarnation node = incarnation(name.substring("node-".length(), name.length() - ".log".length()));
			for (String line : Files.readAllLines(file)) {
				String[] f = line.split(" ");
				if (f.length < 2) {
					continue; // a line cut by kill -9 cannot happen (one write each), but
								// be lenient
				}
				String group = EventLog.groupOf(f);
				GroupRecords records = (group != null) ? node.group(group) : null;
				switch (f[0]) {
					case "node" -> {
						node.belief = BeliefMode.of(f[5]);
						node.renewDeadline = Long.parseLong(f[7]);
					}
					case "acquire" -> {
						if (f[3].equals("taken")) {
							records.acquires.add(new long[] { l(f[1]), l(f[2]), l(f[4]), l(f[5]) });
						}
					}
					case "renew-start" -> records.renewsByEntry.putIfAbsent(l(f[1]), new long[] { l(f[2]), -1 });
					case "renew-end" -> records.renewsByEntry.put(l(f[1]),
							new long[] { l(f[3]), f[4].equals("true") ? 1 : f[4].equals("false") ? 0 : -2 });
					case "granted" -> records.granted.putIfAbsent(l(f[2]), l(f[1]));
					case "revoked" -> {
						records.revoked.putIfAbsent(l(f[2]), l(f[1]));
						records.revocationReasons.putIfAbsent(l(f[2]), f[3]);
					}
					case "release" -> records.released.putIfAbsent(l(f[2]), l(f[1]));
					case "release-end" -> records.releaseEnds.add(new long[] { l(f[1]), l(f[2]) });
					case "probe" ->
						records.probes.add(new long[] { l(f[1]), l(f[2]), l(f[3]), l(f[4]), l(f[5]), l(f[6]) });
					case "action" -> records.actions.add(new long[] { l(f[1]), l(f[2]), l(f[3]), l(f[4]), l(f[5]),
							f[6].equals("accepted") ? 1 : f[6].equals("refused") ? 0 : -1 });
					case "rogue" -> records.rogueWrites.add(new long[] { l(f[1]), l(f[2]), l(f[3]),
							f[4].equals("accepted") ? 1 : f[4].equals("refused") ? 0 : -1 });
					case "job-start" ->
						records.jobStarts.add(new long[] { l(f[1]), l(f[2]), l(f[3]), l(f[4]), catchUp(f[5]) });
					case "job" -> records.jobs.add(new long[] { l(f[1]), l(f[2]), l(f[3]), l(f[4]), l(f[5]),
							f[7].equals("run") ? 1 : f[7].equals("refused") ? 0 : -1, catchUp(f[6]) });
					case "clock" -> node.clocks.add(new long[] { l(f[1]), l(f[2]) });
					case "stall" -> node.stalls.add(new long[] { l(f[1]), l(f[2]) });
					case "rate" -> node.clockRates.put(l(f[1]), Double.parseDouble(f[2]));
					case "ready" -> node.ready = Math.min(node.ready, l(f[1]));
					default -> {
						// exit and future records
					}
				}
			}
		}

		private void readHarness(Path file) throws IOException {
			for (String line : Files.readAllLines(file)) {
				String[] f = line.split(" ");
				switch (f[0]) {
					case "run" -> {
						this.start = l(f[1]);
						this.startWall = l(f[2]);
					}
					case "death" -> {
						Incarnation node = incarnation(f[3]);
						node.death = Math.min(node.death, l(f[2]));
						if (f[4].startsWith("unexpected")) {
							this.unexpectedExits++;
						}
					}
					case "fault" -> this.faults.add(new String[] { f[1], f[2], f[3], f[4], f[5] });
					case "skipped" -> this.skipped++;
					case "end" -> this.end = l(f[1]);
					case "write" -> {
						this.writes.computeIfAbsent(EventLog.groupOf(f), (group) -> new ArrayList<>())
							.add(new long[] { l(f[1]), l(f[3]) });
						this.writers.computeIfAbsent(EventLog.groupOf(f), (group) -> new TreeMap<>())
							.computeIfAbsent(l(f[3]), (term) -> new TreeSet<>())
							.add(f[2]);
					}
					default -> {
						// spawn: nothing to check
					}
				}
			}
			if (this.end == Long.MIN_VALUE) {
				throw new IllegalStateException("The run in " + file.getParent() + " did not finish");
			}
		}

		private static long l(String value) {
			return Long.parseLong(value);
		}

		private static long catchUp(String kind) {
			return kind.equals("catch-up") ? 1 : 0;
		}

	}

	// The analysis

	static final class Analysis implements Liveness.Candidates {

		private final Run run;

		private final ChaosSettings settings;

		/** By group, its belief intervals, sorted by start. */
		private final Map<String, List<Interval>> intervals = new TreeMap<>();

		/** By group, what processes that trusted their events would have believed. */
		private final Map<String, List<Interval>> eventIntervals = new TreeMap<>();

		/** By process and group, then term. */
		private final Map<String, Map<Long, Interval>> byKeyGroupAndTerm = new HashMap<>();

		/** For each belief interval, the duration of its acquire call. */
		private final Map<Interval, Long> acquireRoundTrips = new HashMap<>();

		/** By group, its hand-overs (see {@link Liveness.Fault}). */
		private final Map<String, List<Liveness.Fault>> handOvers = new TreeMap<>();

		private long unexplainedBeliefs;

		private long beliefRevivals;

		Analysis(Run run, ChaosSettings settings) {
			this.run = run;
			this.settings = settings;
			for (Incarnation node : run.incarnations.values()) {
				node.groups.forEach((group, records) -> {
					List<Interval> own = (node.belief == BeliefMode.LIBRARY) ? libraryIntervals(node, group, records)
							: eventIntervals(node, group, records);
					this.intervals.computeIfAbsent(group, (name) -> new ArrayList<>()).addAll(own);
					this.eventIntervals.computeIfAbsent(group, (name) -> new ArrayList<>())
						.addAll(eventIntervals(node, group, records));
				});
			}
			this.intervals.values().forEach((own) -> own.sort(Comparator.comparingLong(Interval::start)));
			this.intervals.values()
				.forEach((own) -> own.forEach((interval) -> this.byKeyGroupAndTerm
					.computeIfAbsent(interval.key() + " " + interval.group(), (key) -> new HashMap<>())
					.put(interval.term(), interval)));
			for (Incarnation node : run.incarnations.values()) {
				node.groups.forEach((group, records) -> {
					if (node.belief == BeliefMode.LIBRARY) {
						verifyObservations(node, group, records);
					}
					handOvers(node, group, records);
				});
			}
		}

		/**
		 * Bounds from the acquire and renew calls, the revoked event and the death; see
		 * the class doc.
		 */
		private List<Interval> libraryIntervals(Incarnation node, String group, GroupRecords records) {
			List<Interval> result = new ArrayList<>();
			for (long[] acquire : records.acquires) {
				long term = acquire[2];
				// The wait runs on the node's clock, as its deadline does: a clock that
				// skew-leader sped up ends it early in real time. A nanosecond less, as
				// afterOnItsClock rounds up and this is a lower bound.
				long start = (acquire[3] > 0) ? node.afterOnItsClock(acquire[1], acquire[3]) - 1 : acquire[1];
				long lastStart = acquire[0];
				for (Map.Entry<Long, long[]> renew : records.renewsByEntry.entrySet()) {
					long[] value = renew.getValue();
					if (value[0] == term && (value[1] == 1 || value[1] == -1)) {
						lastStart = Math.max(lastStart, renew.getKey());
					}
				}
				long end = Math.min(node.afterOnItsClock(lastStart, node.renewDeadline), node.death);
				for (Long bound : new Long[] { records.revoked.get(term), records.released.get(term) }) {
					if (bound != null) {
						end = Math.min(end, bound);
					}
				}
				if (end > start) {
					Interval interval = new Interval(node.key, group, term, start, end);
					result.add(interval);
					this.acquireRoundTrips.put(interval, acquire[1] - acquire[0]);
				}
			}
			return result;
		}

		/** What a node that trusts its granted and revoked events believes. */
		private static List<Interval> eventIntervals(Incarnation node, String group, GroupRecords records) {
			List<Interval> result = new ArrayList<>();
			records.granted.forEach((term, granted) -> {
				long end = node.death;
				Long revoked = records.revoked.get(term);
				if (revoked != null) {
					end = Math.min(end, revoked);
				}
				if (end > granted) {
					result.add(new Interval(node.key, group, term, granted, end));
				}
			});
			return result;
		}

		private void verifyObservations(Incarnation node, String group, GroupRecords records) {
			Map<Long, Integer> entries = new HashMap<>();
			for (long[] probe : records.probes) {
				if (probe[4] != 0 && !inside(node.key, group, probe[4], probe[0], probe[1])) {
					this.unexplainedBeliefs++;
				}
				if (probe[5] != 0) {
					if (!inside(node.key, group, probe[5], probe[2], probe[3])) {
						this.unexplainedBeliefs++;
					}
					entries.merge(probe[5], 1, Integer::sum);
				}
			}
			// isValid() promises false forever once a term has ended; a term seen again
			// was revived.
			entries.values().forEach((count) -> this.beliefRevivals += count - 1);
			records.granted.forEach((term, time) -> {
				Interval interval = interval(node.key, group, term);
				if (interval == null || time < interval.start()) {
					this.unexplainedBeliefs++;
				}
			});
		}

		/**
		 * The group's hand-overs by this process: each belief that ended with a
		 * {@code REBALANCED} revocation, from the end of its interval to the return of
		 * its release.
		 */
		private void handOvers(Incarnation node, String group, GroupRecords records) {
			records.revocationReasons.forEach((term, reason) -> {
				Interval interval = interval(node.key, group, term);
				if (!reason.equals(RevocationReason.REBALANCED.name()) || interval == null) {
					return;
				}
				long released = records.releaseEnds.stream()
					.filter((release) -> release[1] == term)
					.mapToLong((release) -> release[0])
					.min()
					.orElse(Long.MAX_VALUE);
				this.handOvers.computeIfAbsent(group, (name) -> new ArrayList<>())
					.add(new Liveness.Fault(Liveness.HAND_OVER, interval.end(), released, node.key, group, "-"));
			});
		}

		/**
		 * Whether an observation made between from and to can have been made inside the
		 * interval.
		 */
		private boolean inside(String key, String group, long term, long from, long to) {
			Interval interval = interval(key, group, term);
			return interval != null && to > interval.start() && from < interval.end();
		}

		private Interval interval(String key, String group, long term) {
			Map<Long, Interval> terms = this.byKeyGroupAndTerm.get(key + " " + group);
			return (terms != null) ? terms.get(term) : null;
		}

		ChaosSummary summary() {
			long overlaps = 0;
			long overlapNanos = 0;
			long eventOverlaps = 0;
			long eventOverlapNanos = 0;
			for (List<Interval> own : this.intervals.values()) {
				Overlap overlap = overlap(own);
				overlaps += overlap.pairs;
				overlapNanos += overlap.nanos;
			}
			for (List<Interval> own : this.eventIntervals.values()) {
				Overlap overlap = overlap(own);
				eventOverlaps += overlap.pairs;
				eventOverlapNanos += overlap.nanos;
			}
			long actions = 0;
			long accepted = 0;
			long refused = 0;
			long errors = 0;
			long outside = 0;
			long rogue = 0;
			long rogueRefused = 0;
			for (Incarnation node : this.run.incarnations.values()) {
				for (Map.Entry<String, GroupRecords> group : node.groups.entrySet()) {
					for (long[] action : group.getValue().actions) {
						actions++;
						if (action[5] == 1) {
							accepted++;
						}
						else if (action[5] == 0) {
							refused++;
						}
						else {
							errors++;
						}
						if (!inside(node.key, group.getKey(), action[2], action[0], action[1])) {
							outside++;
						}
					}
					for (long[] write : group.getValue().rogueWrites) {
						rogue++;
						if (write[3] == 0) {
							rogueRefused++;
						}
					}
				}
			}
			Map<String, List<long[]>> leading = new TreeMap<>();
			this.intervals.forEach((group, own) -> leading.put(group, union(own)));
			long first = this.intervals.values()
				.stream()
				.filter((own) -> !own.isEmpty())
				.mapToLong((own) -> own.get(0).start())
				.min()
				.orElse(this.run.end);
			long[] holdUps = writeHoldUps();
			int groupCount = Math.max(1, this.intervals.size());
			double availability = leading.values()
				.stream()
				.mapToDouble((spans) -> availability(spans, first, this.run.end))
				.sum() / groupCount;
			long longestGap = leading.values()
				.stream()
				.mapToLong((spans) -> longestGap(spans, first, this.run.end))
				.max()
				.orElse(0);
			int intervalCount = this.intervals.values().stream().mapToInt(List::size).sum();
			int handOverCount = this.handOvers.values().stream().mapToInt(List::size).sum();
			return new ChaosSummary(this.settings, (this.run.end - this.run.start) / 1e9, faultCounts(),
					this.run.skipped, this.run.unexpectedExits, this.run.incarnations.size(), intervalCount, overlaps,
					overlapNanos / 1e6, outside, this.unexplainedBeliefs, this.beliefRevivals, termRegressions(),
					termReuses(), refused, staleWritesAccepted(), actions, accepted, errors,
					this.run.writes.values().stream().mapToInt(List::size).sum(), failovers(leading), availability,
					longestGap / 1e6, eventOverlaps, eventOverlapNanos / 1e6, maxClockOffsetSeconds(),
					leaderless(leading), Liveness.Bounds.of(this.settings), holdUps[0], holdUps[1] / 1e6, rogue,
					rogueRefused, handOverCount, WorkChecker.check(this.run, this.settings, this.intervals));
		}

		/** Every group's intervals without a leader, in the order they began. */
		private List<Liveness.Gap> leaderless(Map<String, List<long[]>> leading) {
			List<Liveness.Fault> faults = this.run.faults.stream()
				.map((fault) -> new Liveness.Fault(fault[0], Long.parseLong(fault[1]), Long.parseLong(fault[2]),
						fault[3], fault[4]))
				.toList();
			long origin = this.run.start;
			List<Liveness.Gap> gaps = new ArrayList<>();
			leading.forEach((group, spans) -> {
				Map<Long, Interval> byStart = new HashMap<>();
				this.intervals.get(group).forEach((interval) -> byStart.putIfAbsent(interval.start(), interval));
				List<Liveness.Fault> charged = new ArrayList<>(faults);
				charged.addAll(this.handOvers.getOrDefault(group, List.of()));
				Liveness
					.gaps(group, spans, (start) -> roundTrip(byStart.get(start)),
							(start, from, to) -> stalled(byStart.get(start), from, to), this, charged, this.run.end,
							Liveness.Bounds.of(this.settings))
					.stream()
					.map((gap) -> new Liveness.Gap(gap.group(), gap.start() - origin, gap.end() - origin, gap.cause(),
							gap.deadline() - origin, gap.stall(),
							gap.begunByHandOver() ? gap.handOverDeadline() - origin : 0))
					.forEach(gaps::add);
			});
			gaps.sort(Comparator.comparingLong(Liveness.Gap::start));
			return gaps;
		}

		private long roundTrip(Interval interval) {
			return (interval != null) ? this.acquireRoundTrips.getOrDefault(interval, 0L) : 0;
		}

		/**
		 * How long the process of a belief interval was stalled between {@code from} and
		 * {@code to}, leaving out stalls during a fault aimed at it (a pause is the
		 * fault's, and its bound's, not an allowance).
		 */
		private long stalled(Interval interval, long from, long to) {
			Incarnation node = (interval != null) ? this.run.incarnations.get(interval.key()) : null;
			if (node == null) {
				return 0;
			}
			long total = 0;
			for (long[] stall : node.stalls) {
				long start = Math.max(stall[0], from);
				long end = Math.min(stall[1], to);
				boolean faulted = this.run.faults.stream()
					.anyMatch((fault) -> fault[3].equals(node.key) && Long.parseLong(fault[1]) < stall[1]
							&& Long.parseLong(fault[2]) > stall[0]);
				if (end > start && !faulted) {
					total += end - start;
				}
			}
			return total;
		}

		@Override
		public long releaseReturned(String key, String group, long from) {
			Incarnation node = this.run.incarnations.get(key);
			GroupRecords records = (node != null) ? node.groups.get(group) : null;
			return (records != null) ? records.releaseEnds.stream()
				.mapToLong((release) -> release[0])
				.filter((end) -> end >= from)
				.min()
				.orElse(from) : from;
		}

		/**
		 * The first instant at or after {@code from} at which a process other than
		 * {@code excluded} runs its election (started and not dead), or
		 * {@code Long.MAX_VALUE} if none does before the end.
		 */
		@Override
		public long takeOverPossibleFrom(long from, String excluded) {
			long earliest = Long.MAX_VALUE;
			for (Incarnation node : this.run.incarnations.values()) {
				long available = Math.max(from, node.ready);
				if (!node.key.equals(excluded) && node.ready != Long.MAX_VALUE && available < node.death) {
					earliest = Math.min(earliest, available);
				}
			}
			return earliest;
		}

		/**
		 * Writes held up longer than {@link FencedTable#HOLD_UP_BOUND}, and the longest
		 * write, leaving out the writes of a node while a fault targets it (a paused or
		 * cut-off writer waits for itself) and writes while the store restarts.
		 */
		private long[] writeHoldUps() {
			long bound = FencedTable.HOLD_UP_BOUND.toNanos();
			long heldUp = 0;
			long longest = 0;
			for (Incarnation node : this.run.incarnations.values()) {
				for (GroupRecords records : node.groups.values()) {
					for (long[] action : records.actions) {
						long w0 = action[3];
						long w1 = action[4];
						boolean excused = this.run.faults.stream()
							.anyMatch((fault) -> (fault[3].equals(node.key)
									|| fault[0].equals(FaultType.RESTART_STORE.id())) && Long.parseLong(fault[1]) < w1
									&& Long.parseLong(fault[2]) > w0);
						if (!excused) {
							longest = Math.max(longest, w1 - w0);
							if (w1 - w0 > bound) {
								heldUp++;
							}
						}
					}
				}
			}
			return new long[] { heldUp, longest };
		}

		private Map<String, Integer> faultCounts() {
			Map<String, Integer> counts = new LinkedHashMap<>();
			for (FaultType type : FaultType.values()) {
				int count = (int) this.run.faults.stream().filter((fault) -> fault[0].equals(type.id())).count();
				if (count > 0) {
					counts.put(type.id(), count);
				}
			}
			return counts;
		}

		/**
		 * Terms that went backwards, in each group: a belief that starts after another
		 * with a term not above it, and an acquire that started after another had
		 * returned with a term not above it (the term counter must be linearizable, even
		 * across store restarts and data loss).
		 */
		private long termRegressions() {
			long regressions = 0;
			for (List<Interval> own : this.intervals.values()) {
				long highest = Long.MIN_VALUE;
				for (Interval interval : own) {
					if (interval.term() <= highest) {
						regressions++;
					}
					highest = Math.max(highest, interval.term());
				}
			}
			Map<String, List<long[]>> acquiresByGroup = new TreeMap<>();
			this.run.incarnations.values()
				.forEach((node) -> node.groups
					.forEach((group, records) -> acquiresByGroup.computeIfAbsent(group, (name) -> new ArrayList<>())
						.addAll(records.acquires)));
			for (List<long[]> acquires : acquiresByGroup.values()) {
				List<long[]> byExit = new ArrayList<>(acquires);
				byExit.sort(Comparator.comparingLong((long[] acquire) -> acquire[1]));
				List<long[]> byEntry = new ArrayList<>(acquires);
				byEntry.sort(Comparator.comparingLong((long[] acquire) -> acquire[0]));
				int returned = 0;
				long highestReturned = Long.MIN_VALUE;
				for (long[] acquire : byEntry) {
					while (returned < byExit.size() && byExit.get(returned)[1] < acquire[0]) {
						highestReturned = Math.max(highestReturned, byExit.get(returned)[2]);
						returned++;
					}
					if (acquire[2] <= highestReturned) {
						regressions++;
					}
				}
			}
			return regressions;
		}

		/**
		 * Terms used twice in a group (invariant 2 makes every grant's term unique to
		 * it): each grant of a term that an earlier grant of the group already had, by
		 * another process or by the same one again, and each process beyond the first
		 * whose writes in one term the fence accepted. The fence accepts a write of the
		 * highest term so far, so two holders of one term both write; and two grants of
		 * one term whose calls overlapped, one of which never became a belief (it waited
		 * to act and lost the group first), are no regression of the belief or acquire
		 * order, yet the store handed the term out twice, as a store that lost its data
		 * and counts terms again from what is left would.
		 */
		private long termReuses() {
			long reuses = 0;
			Map<String, Map<Long, Integer>> grants = new TreeMap<>();
			this.run.incarnations.values()
				.forEach((node) -> node.groups.forEach((group, records) -> records.acquires
					.forEach((acquire) -> grants.computeIfAbsent(group, (name) -> new TreeMap<>())
						.merge(acquire[2], 1, Integer::sum))));
			for (Map<Long, Integer> byTerm : grants.values()) {
				for (int count : byTerm.values()) {
					reuses += count - 1;
				}
			}
			for (Map<Long, Set<String>> byTerm : this.run.writers.values()) {
				for (Set<String> keys : byTerm.values()) {
					reuses += keys.size() - 1;
				}
			}
			return reuses;
		}

		/**
		 * Accepted writes whose term is below one accepted before them in their group:
		 * what fencing must prevent.
		 */
		private long staleWritesAccepted() {
			long stale = 0;
			for (List<long[]> writes : this.run.writes.values()) {
				long highest = Long.MIN_VALUE;
				for (long[] write : writes) {
					if (write[1] < highest) {
						stale++;
					}
					highest = Math.max(highest, write[1]);
				}
			}
			return stale;
		}

		/**
		 * For each fault, the time from its start until a process believes again, counted
		 * only when the belief that held at its start ended before the next fault (0 when
		 * leadership survived); with several groups, the longest of the groups' (the time
		 * until every group the fault left without a leader had one again).
		 */
		private Map<String, List<Double>> failovers(Map<String, List<long[]>> leading) {
			Map<String, List<Double>> result = new LinkedHashMap<>();
			List<String[]> faults = new ArrayList<>(this.run.faults);
			faults.sort(Comparator.comparingLong((String[] fault) -> Long.parseLong(fault[1])));
			for (int i = 0; i < faults.size(); i++) {
				long start = Long.parseLong(faults.get(i)[1]);
				long until = (i + 1 < faults.size()) ? Long.parseLong(faults.get(i + 1)[1]) : this.run.end;
				double millis = 0;
				for (List<long[]> spans : leading.values()) {
					millis = Math.max(millis, failover(spans, start, until));
				}
				result.computeIfAbsent(faults.get(i)[0], (type) -> new ArrayList<>()).add(millis);
			}
			Map<String, List<Double>> byType = new LinkedHashMap<>();
			for (FaultType type : FaultType.values()) {
				if (result.containsKey(type.id())) {
					byType.put(type.id(), result.get(type.id()));
				}
			}
			return byType;
		}

		private static double failover(List<long[]> leading, long start, long until) {
			long gapStart = start;
			boolean survived = false;
			for (long[] span : leading) {
				if (span[0] <= start && span[1] > start) {
					survived = span[1] >= until;
					gapStart = span[1];
				}
			}
			if (survived) {
				return 0;
			}
			long next = until;
			for (long[] span : leading) {
				if (span[0] >= gapStart) {
					next = Math.min(next, span[0]);
					break;
				}
			}
			return Math.max(0, next - start) / 1e6;
		}

		private static double availability(List<long[]> leading, long from, long to) {
			if (to <= from) {
				return 0;
			}
			long covered = 0;
			for (long[] span : leading) {
				covered += Math.max(0, Math.min(span[1], to) - Math.max(span[0], from));
			}
			return (double) covered / (to - from);
		}

		private static long longestGap(List<long[]> leading, long from, long to) {
			long longest = 0;
			long cursor = from;
			for (long[] span : leading) {
				longest = Math.max(longest, Math.min(span[0], to) - cursor);
				cursor = Math.max(cursor, span[1]);
			}
			return Math.max(longest, to - cursor);
		}

		private double maxClockOffsetSeconds() {
			double max = 0;
			for (Incarnation node : this.run.incarnations.values()) {
				for (long[] clock : node.clocks) {
					double expected = this.run.startWall + (clock[0] - this.run.start) / 1e6;
					max = Math.max(max, Math.abs(clock[1] - expected) / 1000);
				}
			}
			return max;
		}

	}

	/**
	 * Pairs of intervals of different processes that overlap, and the time two or more
	 * believed.
	 */
	record Overlap(long pairs, long nanos) {
	}

	static Overlap overlap(List<Interval> intervals) {
		List<Interval> sorted = new ArrayList<>(intervals);
		sorted.sort(Comparator.comparingLong(Interval::start));
		long pairs = 0;
		for (int i = 0; i < sorted.size(); i++) {
			for (int j = i + 1; j < sorted.size() && sorted.get(j).start() < sorted.get(i).end(); j++) {
				if (!sorted.get(j).key().equals(sorted.get(i).key())) {
					pairs++;
				}
			}
		}
		// Time covered by two or more processes: merge each process's intervals, then
		// sweep.
		Map<String, List<Interval>> byKey = new HashMap<>();
		sorted.forEach((interval) -> byKey.computeIfAbsent(interval.key(), (key) -> new ArrayList<>()).add(interval));
		List<long[]> edges = new ArrayList<>();
		for (List<Interval> own : byKey.values()) {
			for (long[] span : union(own)) {
				edges.add(new long[] { span[0], 1 });
				edges.add(new long[] { span[1], -1 });
			}
		}
		edges.sort(Comparator.comparingLong((long[] edge) -> edge[0]).thenComparingLong((long[] edge) -> edge[1]));
		long nanos = 0;
		int believers = 0;
		long previous = 0;
		for (long[] edge : edges) {
			if (believers >= 2) {
				nanos += edge[0] - previous;
			}
			believers += (int) edge[1];
			previous = edge[0];
		}
		return new Overlap(pairs, nanos);
	}

	/** The union of intervals as sorted, disjoint {start, end} spans. */
	static List<long[]> union(List<Interval> intervals) {
		List<Interval> sorted = new ArrayList<>(intervals);
		sorted.sort(Comparator.comparingLong(Interval::start));
		List<long[]> spans = new ArrayList<>();
		for (Interval interval : sorted) {
			long[] last = spans.isEmpty() ? null : spans.get(spans.size() - 1);
			if (last != null && interval.start() <= last[1]) {
				last[1] = Math.max(last[1], interval.end());
			}
			else {
				spans.add(new long[] { interval.start(), interval.end() });
			}
		}
		return spans;
	}

}
