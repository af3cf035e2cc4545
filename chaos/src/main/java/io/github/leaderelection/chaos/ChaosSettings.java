package io.github.leaderelection.chaos;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.stream.IntStream;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.chaos.ChaosNode.BeliefMode;

/**
 * What one run does: which store, which faults and how many, how the nodes time their
 * elections, believe and write.
 *
 * @param name the run's name: its directory under {@code output} and its summary's prefix
 * @param backend the store
 * @param seed the seed of every random choice of the harness
 * @param duration inject faults for at least this long, or {@code null} to stop after
 * {@code faults}
 * @param faults inject at least this many faults (a timed run goes on until it has them)
 * @param nodes how many candidate processes
 * @param timings the election timing of each node, by index
 * @param faultTypes the faults to draw from
 * @param belief how the nodes decide that they lead
 * @param fencing whether writes carry their term to a fence
 * @param clockRates the rates {@code skew-leader} draws from for the leader's clock
 * @param groups how many groups every node joins (1: the group {@value #GROUP})
 * @param balance whether the nodes spread leadership over the live candidates
 * ({@code LeaderElectionEngine.Builder.balance}, weight 1, no preferred leaders)
 * @param runRecords whether the nodes' leader-only job claims each tick in the store's
 * run records ({@link JobTicker}); off, each node runs it whenever it believes it leads
 * @param output the directory of runs and summaries
 */
record ChaosSettings(String name, Backend backend, long seed, Duration duration, int faults, int nodes,
		List<ElectionTiming> timings, Set<FaultType> faultTypes, BeliefMode belief, boolean fencing,
		ClockRates clockRates, int groups, boolean balance, boolean runRecords, Path output) {

	/** The one group of a run with one group, and the prefix of the groups of others. */
	static final String GROUP = "chaos";

	/**
	 * Lease 2 s, renew deadline 950 ms, retry 400 ms: a fault cycle takes a few seconds,
	 * and the lease is longer than two renew deadlines, as the library's defaults are, so
	 * that a restore of an older copy of the election's data cannot give two believers
	 * (see {@link ElectionTiming#survivesRestores()}).
	 */
	static final ElectionTiming TIMING = new ElectionTiming(Duration.ofSeconds(2), Duration.ofMillis(950),
			Duration.ofMillis(400));

	/**
	 * Nodes do not have to agree on their timing: each writes its own lease, and each
	 * believes for its own renew deadline. The checked runs give the nodes
	 * {@link #TIMING} scaled by these factors, in turn.
	 */
	private static final double[] TIMING_FACTORS = { 1.0, 1.25, 0.8 };

	ChaosSettings {
		Objects.requireNonNull(backend, "backend");
		Objects.requireNonNull(belief, "belief");
		Objects.requireNonNull(clockRates, "clockRates");
		Objects.requireNonNull(output, "output");
		timings = List.copyOf(timings);
		faultTypes = Set.copyOf(faultTypes);
		if (faultTypes.isEmpty()) {
			throw new IllegalArgumentException("No fault to inject");
		}
		Set<FaultType> unsupported = EnumSet.copyOf(faultTypes);
		unsupported.removeAll(backend.faultTypes());
		if (!unsupported.isEmpty()) {
			throw new IllegalArgumentException("The " + backend + " backend cannot inject " + unsupported
					+ "; it injects " + backend.faultTypes());
		}
		if (nodes < 2) {
			throw new IllegalArgumentException("An election needs at least 2 nodes, not " + nodes);
		}
		if (timings.size() != nodes) {
			throw new IllegalArgumentException(timings.size() + " timings for " + nodes + " nodes");
		}
		if (groups < 1) {
			throw new IllegalArgumentException("A run needs at least 1 group, not " + groups);
		}
	}

	/**
	 * The checked configuration: every fault, nodes with different timings, clocks skewed
	 * within the margin, library belief, fencing on.
	 */
	static ChaosSettings safe(Backend backend, long seed, Duration duration, int faults, Path output) {
		return new ChaosSettings(backend.id(), backend, seed, duration, faults, 3, mixedTimings(3),
				backend.faultTypes(), BeliefMode.LIBRARY, true, ClockRates.withinMargin(TIMING), 1, false, true,
				output);
	}

	/**
	 * The control experiment: nodes that trust a flag flipped by events and write without
	 * fencing, paused past their lease.
	 */
	static ChaosSettings control(Backend backend, long seed, int faults, Path output) {
		return new ChaosSettings("control-" + backend.id(), backend, seed, null, faults, 3,
				Collections.nCopies(3, TIMING), EnumSet.of(FaultType.STOP_LEADER), BeliefMode.FLAG, false,
				ClockRates.withinMargin(TIMING), 1, false, true, output);
	}

	/**
	 * The job control: the control experiment's nodes, whose leader-only job claims
	 * nothing in the run records: each node runs it at every tick at which its flag says
	 * it leads, so a leader paused past its lease runs, when it wakes, ticks its
	 * successor ran.
	 */
	static ChaosSettings jobControl(Backend backend, long seed, int faults, Path output) {
		return new ChaosSettings("job-control-" + backend.id(), backend, seed, null, faults, 3,
				Collections.nCopies(3, TIMING), EnumSet.of(FaultType.STOP_LEADER), BeliefMode.FLAG, false,
				ClockRates.withinMargin(TIMING), 1, false, false, output);
	}

	/**
	 * The clock control: nodes that do everything right, but whose leader's clock runs
	 * twice as slow as the margin allows while its link is cut.
	 */
	static ChaosSettings clockControl(Backend backend, long seed, int faults, Path output) {
		double rate = ClockRates.margin(TIMING) / 2;
		return new ChaosSettings("clock-control-" + backend.id(), backend, seed, null, faults, 3,
				Collections.nCopies(3, TIMING), EnumSet.of(FaultType.SKEW_LEADER), BeliefMode.LIBRARY, true,
				new ClockRates(rate, rate), 1, false, true, output);
	}

	/** These settings with only some of their faults. */
	ChaosSettings withFaultTypes(Set<FaultType> only) {
		return new ChaosSettings(this.name, this.backend, this.seed, this.duration, this.faults, this.nodes,
				this.timings, only, this.belief, this.fencing, this.clockRates, this.groups, this.balance,
				this.runRecords, this.output);
	}

	/**
	 * These settings with other timings, and clock rates no slower than the margin of any
	 * of them allows.
	 */
	ChaosSettings withTimings(List<ElectionTiming> other) {
		double slowest = this.clockRates.slowest();
		for (ElectionTiming timing : other) {
			slowest = Math.max(slowest, ClockRates.withinMargin(timing).slowest());
		}
		ClockRates rates = new ClockRates(slowest, Math.max(slowest, this.clockRates.fastest()));
		return new ChaosSettings(this.name, this.backend, this.seed, this.duration, this.faults, this.nodes, other,
				this.faultTypes, this.belief, this.fencing, rates, this.groups, this.balance, this.runRecords,
				this.output);
	}

	/**
	 * These settings with every node in {@code count} groups, spreading their leadership
	 * over the live candidates or not. A run with more than one group, or with balancing,
	 * is named apart ({@code <name>-<count>-groups}, {@code -balanced}), so that its
	 * records and summary do not replace the one-group run's.
	 */
	ChaosSettings withGroups(int count, boolean balanced) {
		String base = this.name;
		if (this.groups > 1 || this.balance) {
			base = base.replaceFirst("(-\\d+-groups)?(-balanced)?$", "");
		}
		String named = base + ((count > 1) ? "-" + count + "-groups" : "") + (balanced ? "-balanced" : "");
		return new ChaosSettings(named, this.backend, this.seed, this.duration, this.faults, this.nodes, this.timings,
				this.faultTypes, this.belief, this.fencing, this.clockRates, count, balanced, this.runRecords,
				this.output);
	}

	/**
	 * The groups every node joins: {@value #GROUP} alone, or {@code chaos-00},
	 * {@code chaos-01} and so on.
	 */
	List<String> groupNames() {
		if (this.groups == 1) {
			return List.of(GROUP);
		}
		int digits = Integer.toString(this.groups - 1).length();
		return IntStream.range(0, this.groups)
			.mapToObj((index) -> GROUP + "-" + String.format(Locale.ROOT, "%0" + digits + "d", index))
			.toList();
	}

	static List<ElectionTiming> mixedTimings(int nodes) {
		return mixedTimings(nodes, TIMING);
	}

	/** The base timing scaled for each node, as {@link #mixedTimings(int)} scales it. */
	static List<ElectionTiming> mixedTimings(int nodes, ElectionTiming base) {
		return IntStream.range(0, nodes)
			.mapToObj((node) -> scaled(base, TIMING_FACTORS[node % TIMING_FACTORS.length]))
			.toList();
	}

	private static ElectionTiming scaled(ElectionTiming base, double factor) {
		return new ElectionTiming(scaled(base.leaseDuration(), factor), scaled(base.renewDeadline(), factor),
				scaled(base.retryPeriod(), factor));
	}

	private static Duration scaled(Duration duration, double factor) {
		return Duration.ofMillis(Math.round(duration.toMillis() * factor));
	}

	ElectionTiming timing(int node) {
		return this.timings.get(node);
	}

	/**
	 * The longest lease, renew deadline and retry period of any node: what faults last
	 * and what the liveness bounds allow.
	 */
	ElectionTiming longest() {
		return new ElectionTiming(
				this.timings.stream().map(ElectionTiming::leaseDuration).max(Duration::compareTo).orElseThrow(),
				this.timings.stream().map(ElectionTiming::renewDeadline).max(Duration::compareTo).orElseThrow(),
				this.timings.stream().map(ElectionTiming::retryPeriod).max(Duration::compareTo).orElseThrow());
	}

	Path directory() {
		return this.output.resolve(this.name);
	}

	Path summaryFile() {
		return this.output.resolve(this.name + "-summary.json");
	}

	/**
	 * The rates, relative to real time, at which {@code skew-leader} runs the leader's
	 * election clock, drawn uniformly.
	 */
	record ClockRates(double slowest, double fastest) {

		ClockRates {
			if (!(slowest > 0) || fastest < slowest) {
				throw new IllegalArgumentException("Clock rates from " + slowest + " to " + fastest);
			}
		}

		/**
		 * Within the margin the README states: a belief of one renew deadline on the
		 * slowest clock still ends before the store's lease, with a twentieth of the
		 * lease to spare (0.525 with the chaos timing, whose margin is 0.475); up to a
		 * quarter fast.
		 */
		static ClockRates withinMargin(ElectionTiming timing) {
			return new ClockRates(margin(timing) + 0.05, 1.25);
		}

		/**
		 * The slowest rate at which a belief of one renew deadline still ends by the end
		 * of the lease in the store.
		 */
		static double margin(ElectionTiming timing) {
			return (double) timing.renewDeadline().toNanos() / timing.leaseDuration().toNanos();
		}

		double draw(Random random) {
			return this.slowest + random.nextDouble() * (this.fastest - this.slowest);
		}

	}

}
