package io.github.leaderelection.chaos;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The measured outcome of one run, as a table for people and as JSON for tools. See
 * {@link Checker} for what each count means.
 *
 * @param settings what the run did
 * @param durationSeconds from the start of the first node to the end of the last fault
 * @param faults faults injected, by type
 * @param faultsSkipped faults (and settling waits) for which no leader could be found in
 * 30 s
 * @param unexpectedExits node processes that exited by themselves
 * @param processes node processes started (each restart is a new one)
 * @param beliefIntervals beliefs checked
 * @param overlaps pairs of beliefs of different processes in one group that overlap
 * @param overlapMillis time during which two or more processes believed
 * @param actionsOutsideBelief actions whose allowing check lies outside every belief of
 * its process and term
 * @param unexplainedBeliefs observations of a belief (probe samples, granted events)
 * outside its computed bounds: the bounds would be unsound
 * @param beliefRevivals terms that a process saw end and then held again
 * ({@code isValid()} promises false forever once a term ended)
 * @param termRegressions beliefs or acquires whose term is not above an earlier one's
 * @param termReuses grants of a term that an earlier grant of the group had, and
 * processes beyond the first whose writes in one term were accepted
 * @param staleWritesRefused writes refused by the fence because a higher term had written
 * @param staleWritesAccepted accepted writes whose term is below an earlier accepted
 * write's
 * @param actions leader-only actions attempted
 * @param actionsAccepted actions whose write was accepted
 * @param actionErrors actions whose write failed (database unreachable)
 * @param rowsWritten rows in the protected table after the run
 * @param failoverMillis per fault type, the time from the fault to the next belief when
 * leadership was lost (0 when it survived); with several groups, of the group that took
 * longest
 * @param leaderAvailability share of time, from the first belief to the end of the
 * faults, with a believer (an upper estimate: the intervals are upper bounds of the
 * beliefs); with several groups, their mean
 * @param longestLeaderlessMillis the longest time without a believer in any group
 * @param eventOverlaps overlaps of what nodes that trusted their granted and revoked
 * events would have believed
 * @param eventOverlapMillis time of those overlaps
 * @param maxClockOffsetSeconds the largest wall-clock offset a node recorded (shows the
 * clock jumps took effect)
 * @param leaderless every interval without a believer in a group, from the run's start,
 * with the fault it is charged to and its bound (see {@link Liveness}); the JSON lists at
 * most {@link #LISTED_GAPS} of them (see {@link #listedGaps})
 * @param bounds the liveness bounds of this run's timing and store
 * @param writesHeldUp writes of nodes whose links worked that took longer than
 * {@link FencedTable#HOLD_UP_BOUND}: a lock held by a writer that went quiet was not
 * bounded
 * @param longestWriteMillis the longest of those writes
 * @param rogueWrites writes of jobs that ignored revocation ({@code rogue-leader}); an
 * accepted one whose term is below an earlier accepted write's counts in
 * {@code staleWritesAccepted}
 * @param rogueWritesRefused those the fence refused
 * @param handOvers beliefs that balancing ended to hand their group to another candidate
 * ({@code REBALANCED})
 * @param work the runs of the leader-only job, its duplicate and lost ticks (see
 * {@link WorkChecker})
 */
record ChaosSummary(ChaosSettings settings, double durationSeconds, Map<String, Integer> faults, int faultsSkipped,
		int unexpectedExits, int processes, int beliefIntervals, long overlaps, double overlapMillis,
		long actionsOutsideBelief, long unexplainedBeliefs, long beliefRevivals, long termRegressions, long termReuses,
		long staleWritesRefused, long staleWritesAccepted, long actions, long actionsAccepted, long actionErrors,
		long rowsWritten, Map<String, List<Double>> failoverMillis, double leaderAvailability,
		double longestLeaderlessMillis, long eventOverlaps, double eventOverlapMillis, double maxClockOffsetSeconds,
		List<Liveness.Gap> leaderless, Liveness.Bounds bounds, long writesHeldUp, double longestWriteMillis,
		long rogueWrites, long rogueWritesRefused, long handOvers, WorkChecker.Result work) {

	/**
	 * How many leaderless intervals the JSON lists one by one at most; see listedGaps.
	 */
	static final int LISTED_GAPS = 500;

	int faultCount() {
		return this.faults.values().stream().mapToInt(Integer::intValue).sum();
	}

	/**
	 * Whether the run kept every promise: no overlap, no action outside a belief, no term
	 * going backwards or used twice, bounds that explain every observation, and (with
	 * fencing) no stale write accepted.
	 */
	boolean passed() {
		return violations().isEmpty();
	}

	List<String> violations() {
		List<String> violations = new ArrayList<>();
		if (this.overlaps > 0) {
			violations.add(this.overlaps + " overlapping beliefs (" + format(this.overlapMillis) + " ms)");
		}
		if (this.actionsOutsideBelief > 0) {
			violations.add(this.actionsOutsideBelief + " actions outside a belief");
		}
		if (this.termRegressions > 0) {
			violations.add(this.termRegressions + " term regressions");
		}
		if (this.termReuses > 0) {
			violations.add(this.termReuses + " term reuses");
		}
		if (this.unexplainedBeliefs > 0) {
			violations.add(this.unexplainedBeliefs + " observations of a belief outside its bounds");
		}
		if (this.beliefRevivals > 0) {
			// Leadership.isValid() promises false forever once a term has ended.
			violations.add(this.beliefRevivals + " terms believed again after their belief ended");
		}
		if (this.settings.fencing() && this.staleWritesAccepted > 0) {
			violations.add(this.staleWritesAccepted + " stale writes accepted despite fencing");
		}
		if (this.writesHeldUp > 0) {
			violations.add(this.writesHeldUp + " writes held up longer than " + FencedTable.HOLD_UP_BOUND.toMillis()
					+ " ms (longest " + format(this.longestWriteMillis) + " ms)");
		}
		if (this.work.duplicates() > 0) {
			violations.add(this.work.duplicates() + " ticks of the leader-only job run twice");
		}
		if (!this.work.lost().isEmpty()) {
			violations.add(this.work.lost().size() + " ticks of the leader-only job lost, at "
					+ this.work.lost()
						.stream()
						.limit(5)
						.map((millis) -> String.format(Locale.ROOT, "%.0f s", millis / 1e3))
						.collect(Collectors.joining(", "))
					+ ((this.work.lost().size() > 5) ? ", ..." : ""));
		}
		List<Liveness.Gap> late = lateGaps();
		if (!late.isEmpty()) {
			violations.add(late.size() + " leaderless intervals past their bound: "
					+ late.stream().limit(5).map(this::describe).collect(Collectors.joining(", ")));
		}
		return violations;
	}

	/** Leaderless intervals that ended after their bound. */
	List<Liveness.Gap> lateGaps() {
		return this.leaderless.stream().filter((gap) -> !gap.withinBound()).toList();
	}

	private String describe(Liveness.Gap gap) {
		return String.format(Locale.ROOT, "%.0f ms after %s at %.1f s in %s (%.0f ms over, %.0f ms of stall allowed)",
				gap.nanos() / 1e6, gap.cause(), gap.start() / 1e9, gap.group(), (gap.end() - gap.deadline()) / 1e6,
				gap.stall() / 1e6);
	}

	String toJson() {
		StringBuilder json = new StringBuilder("{\n");
		field(json, "backend", quote(this.settings.backend().id()));
		field(json, "run", quote(this.settings.name()));
		field(json, "seed", this.settings.seed());
		field(json, "durationSeconds", format(this.durationSeconds));
		field(json, "nodes", this.settings.nodes());
		field(json, "groups", this.settings.groups());
		field(json, "balance", this.settings.balance());
		field(json, "timings",
				this.settings.timings()
					.stream()
					.map((timing) -> "{\"leaseMillis\": " + timing.leaseDuration().toMillis()
							+ ", \"renewDeadlineMillis\": " + timing.renewDeadline().toMillis()
							+ ", \"retryPeriodMillis\": " + timing.retryPeriod().toMillis() + "}")
					.collect(Collectors.joining(", ", "[", "]")));
		field(json, "clockRates", "{\"slowest\": " + format(this.settings.clockRates().slowest()) + ", \"fastest\": "
				+ format(this.settings.clockRates().fastest()) + "}");
		field(json, "belief", quote(this.settings.belief().toString()));
		field(json, "fencing", this.settings.fencing());
		field(json, "faults",
				object(this.faults.entrySet()
					.stream()
					.collect(Collectors.toMap(Map.Entry::getKey, (entry) -> Integer.toString(entry.getValue()),
							(a, b) -> a, LinkedHashMap::new))));
		field(json, "faultCount", faultCount());
		field(json, "faultsSkipped", this.faultsSkipped);
		field(json, "unexpectedExits", this.unexpectedExits);
		field(json, "processes", this.processes);
		field(json, "beliefIntervals", this.beliefIntervals);
		field(json, "overlaps", this.overlaps);
		field(json, "overlapMillis", format(this.overlapMillis));
		field(json, "actionsOutsideBelief", this.actionsOutsideBelief);
		field(json, "unexplainedBeliefs", this.unexplainedBeliefs);
		field(json, "beliefRevivals", this.beliefRevivals);
		field(json, "handOvers", this.handOvers);
		field(json, "termRegressions", this.termRegressions);
		field(json, "termReuses", this.termReuses);
		field(json, "staleWritesRefused", this.staleWritesRefused);
		field(json, "staleWritesAccepted", this.staleWritesAccepted);
		field(json, "rogueWrites",
				"{\"total\": " + this.rogueWrites + ", \"refused\": " + this.rogueWritesRefused + "}");
		field(json, "actions",
				"{\"total\": " + this.actions + ", \"accepted\": " + this.actionsAccepted + ", \"refused\": "
						+ this.staleWritesRefused + ", \"errors\": " + this.actionErrors + ", \"rowsWritten\": "
						+ this.rowsWritten + "}");
		field(json, "failoverMillis",
				object(this.failoverMillis.entrySet()
					.stream()
					.collect(Collectors.toMap(Map.Entry::getKey, (entry) -> percentiles(entry.getValue()), (a, b) -> a,
							LinkedHashMap::new))));
		field(json, "leaderAvailability", String.format(Locale.ROOT, "%.4f", this.leaderAvailability));
		field(json, "longestLeaderlessMillis", format(this.longestLeaderlessMillis));
		field(json, "eventOverlaps", this.eventOverlaps);
		field(json, "eventOverlapMillis", format(this.eventOverlapMillis));
		field(json, "maxClockOffsetSeconds", format(this.maxClockOffsetSeconds));
		field(json, "writesHeldUp", this.writesHeldUp);
		field(json, "longestWriteMillis", format(this.longestWriteMillis));
		field(json, "livenessBounds", "{\"crashMillis\": " + this.bounds.crash() / 1_000_000 + ", \"gracefulMillis\": "
				+ this.bounds.graceful() / 1_000_000 + ", \"lostDataMillis\": " + this.bounds.lostData() / 1_000_000
				+ ", \"otherFaultMillis\": " + this.bounds.workingLink() / 1_000_000 + ", \"handOverMillis\": "
				+ this.bounds.handOver() / 1_000_000 + ", \"balanceHoldBackMillis\": "
				+ this.bounds.holdBack() / 1_000_000 + "}");
		field(json, "runRecords", this.settings.runRecords());
		field(json, "job",
				String.format(Locale.ROOT,
						"{\"runs\": %d, \"catchUpRuns\": %d, \"ticksCovered\": %d, \"ticksCoveredAhead\": %d, "
								+ "\"duplicates\": %d, \"ticksLost\": %d, \"duplicatesAcrossDataLoss\": %d, "
								+ "\"ticksUncertain\": %d, \"ticksLostWithStoreData\": %d, \"boundMillis\": %d}",
						this.work.runs(), this.work.catchUps(), this.work.ticksCovered(), this.work.coveredAhead(),
						this.work.duplicates(), this.work.lost().size(), this.work.duplicatesAcrossDataLoss(),
						this.work.uncertain(), this.work.lostWithData(), this.work.boundMillis()));
		field(json, "leaderlessIntervals", this.leaderless.size());
		field(json, "leaderlessPastBound", lateGaps().size());
		List<Liveness.Gap> handOverGaps = handOverGaps();
		field(json, "leaderlessBegunByHandOver", handOverGaps.size());
		field(json, "leaderlessPastHandOverBound",
				handOverGaps.stream().filter((gap) -> !gap.withinHandOverBound()).count());
		field(json, "leaderlessByCause", object(leaderlessByCause()));
		List<Liveness.Gap> listed = listedGaps();
		field(json, "leaderlessListed", quote((listed.size() == this.leaderless.size()) ? "all" : "the " + listed.size()
				+ " of " + this.leaderless.size() + " closest to their bound, every one past it included"));
		field(json, "leaderless",
				listed.stream()
					.map((gap) -> String.format(Locale.ROOT,
							"{\"group\": %s, \"atSeconds\": %.3f, \"millis\": %.1f, \"cause\": %s, "
									+ "\"boundMillis\": %.1f, \"stallMillis\": %.1f, \"withinBound\": %s%s}",
							quote(gap.group()), gap.start() / 1e9, gap.nanos() / 1e6, quote(gap.cause()),
							(gap.deadline() - gap.start()) / 1e6, gap.stall() / 1e6, gap.withinBound(),
							gap.begunByHandOver() ? String.format(Locale.ROOT, ", \"handOverBoundMillis\": %.1f",
									(gap.handOverDeadline() - gap.start()) / 1e6) : ""))
					.collect(Collectors.joining(",\n    ", "[\n    ", "\n  ]")));
		json.append("  \"passed\": ").append(passed()).append("\n}\n");
		return json.toString();
	}

	/**
	 * The leaderless intervals the JSON lists one by one: all of them, up to
	 * {@link #LISTED_GAPS}; beyond that (an hour with a hundred groups has tens of
	 * thousands, megabytes of JSON), every one past its bound and the others closest to
	 * theirs, in the order they began. The counts by cause cover them all.
	 */
	List<Liveness.Gap> listedGaps() {
		return listed(this.leaderless, LISTED_GAPS);
	}

	static List<Liveness.Gap> listed(List<Liveness.Gap> gaps, int max) {
		if (gaps.size() <= max) {
			return gaps;
		}
		Set<Liveness.Gap> listed = new HashSet<>();
		gaps.stream().filter((gap) -> !gap.withinBound()).forEach(listed::add);
		gaps.stream()
			.filter(Liveness.Gap::withinBound)
			.sorted(Comparator.comparingDouble(ChaosSummary::shareOfBound).reversed())
			.limit(Math.max(0, max - listed.size()))
			.forEach(listed::add);
		return gaps.stream().filter(listed::contains).toList();
	}

	/**
	 * Per cause: how many intervals, how many past their bound, the longest and the
	 * closest to its bound.
	 */
	private Map<String, String> leaderlessByCause() {
		Map<String, List<Liveness.Gap>> byCause = this.leaderless.stream()
			.collect(Collectors.groupingBy(Liveness.Gap::cause, TreeMap::new, Collectors.toList()));
		Map<String, String> members = new LinkedHashMap<>();
		byCause.forEach((cause, gaps) -> members.put(cause,
				String.format(Locale.ROOT,
						"{\"count\": %d, \"pastBound\": %d, \"longestMillis\": %.1f, \"largestShareOfBound\": %.3f}",
						gaps.size(), gaps.stream().filter((gap) -> !gap.withinBound()).count(),
						gaps.stream().mapToLong(Liveness.Gap::nanos).max().orElse(0) / 1e6,
						gaps.stream().mapToDouble(ChaosSummary::shareOfBound).max().orElse(0))));
		return members;
	}

	private static double shareOfBound(Liveness.Gap gap) {
		return (double) gap.nanos() / Math.max(1, gap.deadline() - gap.start());
	}

	String table() {
		StringBuilder table = new StringBuilder();
		table.append(String.format(Locale.ROOT,
				"Chaos run '%s': %s, seed %d, %.0f s, %d faults, %d nodes in %d group(s)%s (lease/renew deadline/retry "
						+ "%s ms), skewed clocks at %.2f-%.2f, belief %s, fencing %s%n",
				this.settings.name(), this.settings.backend(), this.settings.seed(), this.durationSeconds, faultCount(),
				this.settings.nodes(), this.settings.groups(), this.settings.balance() ? ", balanced" : "",
				this.settings.timings()
					.stream()
					.map((timing) -> timing.leaseDuration().toMillis() + "/" + timing.renewDeadline().toMillis() + "/"
							+ timing.retryPeriod().toMillis())
					.collect(Collectors.joining(", ")),
				this.settings.clockRates().slowest(), this.settings.clockRates().fastest(), this.settings.belief(),
				this.settings.fencing() ? "on" : "off"));
		row(table, "belief intervals", this.beliefIntervals + " in " + this.processes + " processes");
		row(table, "overlapping beliefs", this.overlaps + " (" + format(this.overlapMillis) + " ms)");
		row(table, "actions outside belief", Long.toString(this.actionsOutsideBelief));
		row(table, "unexplained beliefs", Long.toString(this.unexplainedBeliefs));
		row(table, "term regressions", Long.toString(this.termRegressions));
		row(table, "term reuses", Long.toString(this.termReuses));
		row(table, "actions", this.actions + " (" + this.actionsAccepted + " accepted, " + this.staleWritesRefused
				+ " stale refused, " + this.actionErrors + " failed)");
		row(table, "stale writes accepted", Long.toString(this.staleWritesAccepted));
		row(table, "rogue writes", this.rogueWrites + " (" + this.rogueWritesRefused + " refused)");
		row(table, "writes held up", this.writesHeldUp + " over " + FencedTable.HOLD_UP_BOUND.toMillis()
				+ " ms (longest write " + format(this.longestWriteMillis) + " ms)");
		row(table, "leader-only job", String.format(Locale.ROOT,
				"%d runs (%d catch-ups), %d ticks covered (%d before they were due), %d run twice, %d lost (not "
						+ "judged: %d after a claim of unknown outcome, %d with lost store data, %d run again after "
						+ "it; bound %d ms)%s",
				this.work.runs(), this.work.catchUps(), this.work.ticksCovered(), this.work.coveredAhead(),
				this.work.duplicates(), this.work.lost().size(), this.work.uncertain(), this.work.lostWithData(),
				this.work.duplicatesAcrossDataLoss(), this.work.boundMillis(),
				this.settings.runRecords() ? "" : ", run records off"));
		row(table, "leader availability", String.format(Locale.ROOT, "%.1f %% (longest gap %s ms)",
				100 * this.leaderAvailability, format(this.longestLeaderlessMillis)));
		row(table, "leaderless intervals", leaderlessSummary());
		if (this.settings.balance()) {
			row(table, "hand-overs", handOverSummary());
		}
		row(table, "liveness bounds", this.bounds.describe());
		row(table, "stall allowance", stallSummary());
		row(table, "event-trusting overlaps", this.eventOverlaps + " (" + format(this.eventOverlapMillis) + " ms)");
		row(table, "belief revivals", Long.toString(this.beliefRevivals));
		row(table, "max clock offset", format(this.maxClockOffsetSeconds) + " s");
		table.append(String.format(Locale.ROOT, "  %-16s %5s %10s %10s %10s%n", "fault", "count", "p50 ms", "p99 ms",
				"max ms"));
		this.failoverMillis.forEach((type, millis) -> {
			double[] values = sorted(millis);
			table.append(String.format(Locale.ROOT, "  %-16s %5d %10.0f %10.0f %10.0f%n", type, values.length,
					percentile(values, 50), percentile(values, 99), values[values.length - 1]));
		});
		table.append(passed() ? "  PASSED\n" : "  FAILED: " + String.join("; ", violations()) + "\n");
		return table.toString();
	}

	private String leaderlessSummary() {
		if (this.leaderless.isEmpty()) {
			return "none";
		}
		Liveness.Gap longest = this.leaderless.stream()
			.max(Comparator.comparingLong(Liveness.Gap::nanos))
			.orElseThrow();
		Liveness.Gap closest = this.leaderless.stream()
			.max(Comparator.comparingDouble(ChaosSummary::shareOfBound))
			.orElseThrow();
		return String.format(Locale.ROOT,
				"%d, %d past their bound (longest %.0f ms, after %s, bound %.0f ms; closest to its bound %.0f of "
						+ "%.0f ms, after %s)",
				this.leaderless.size(), lateGaps().size(), longest.nanos() / 1e6, longest.cause(),
				(longest.deadline() - longest.start()) / 1e6, closest.nanos() / 1e6,
				(closest.deadline() - closest.start()) / 1e6, closest.cause());
	}

	/**
	 * Hand-overs, and the intervals without a leader they began: how many, how many
	 * outlasted the hand-over's own bound (a fault under way may allow them longer), and
	 * the longest against that bound.
	 */
	private String handOverSummary() {
		List<Liveness.Gap> gaps = handOverGaps();
		String text = this.handOvers + " (" + gaps.size() + " began an interval without a leader";
		if (gaps.isEmpty()) {
			return text + ")";
		}
		Liveness.Gap longest = gaps.stream().max(Comparator.comparingLong(Liveness.Gap::nanos)).orElseThrow();
		return text + String.format(Locale.ROOT, ", %d past the hand-over bound; longest %.0f ms, its bound %.0f ms)",
				gaps.stream().filter((gap) -> !gap.withinHandOverBound()).count(), longest.nanos() / 1e6,
				(longest.handOverDeadline() - longest.start()) / 1e6);
	}

	/** The intervals without a leader that a hand-over began. */
	List<Liveness.Gap> handOverGaps() {
		return this.leaderless.stream().filter(Liveness.Gap::begunByHandOver).toList();
	}

	/** How much of the bounds went to stalls of the processes that took over. */
	private String stallSummary() {
		List<Liveness.Gap> stalled = this.leaderless.stream().filter((gap) -> gap.stall() > 0).toList();
		long longest = stalled.stream().mapToLong(Liveness.Gap::stall).max().orElse(0);
		return String.format(Locale.ROOT, "%d intervals, longest %.0f ms (time the process that took over was not "
				+ "running, added to its bound)", stalled.size(), longest / 1e6);
	}

	private static void row(StringBuilder table, String name, String value) {
		table.append(String.format(Locale.ROOT, "  %-24s %s%n", name, value));
	}

	private static String percentiles(List<Double> millis) {
		double[] values = sorted(millis);
		return "{\"count\": " + values.length + ", \"p50\": " + format(percentile(values, 50)) + ", \"p99\": "
				+ format(percentile(values, 99)) + ", \"max\": " + format(values[values.length - 1]) + "}";
	}

	private static double[] sorted(List<Double> values) {
		return values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
	}

	/** Nearest-rank percentile. */
	static double percentile(double[] sorted, int percent) {
		int rank = (int) Math.ceil(percent / 100.0 * sorted.length);
		return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
	}

	private static String object(Map<String, String> members) {
		return members.entrySet()
			.stream()
			.map((entry) -> quote(entry.getKey()) + ": " + entry.getValue())
			.collect(Collectors.joining(", ", "{", "}"));
	}

	private static void field(StringBuilder json, String name, Object value) {
		json.append("  ").append(quote(name)).append(": ").append(value).append(",\n");
	}

	private static String quote(String value) {
		return "\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
	}

	private static String format(double value) {
		return String.format(Locale.ROOT, "%.1f", value);
	}

}
