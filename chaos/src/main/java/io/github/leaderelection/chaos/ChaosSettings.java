package io.github.leaderelection.chaos;

import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.chaos.ChaosNode.BeliefMode;

/**
 * What one run does: which store, which faults and how many, how the nodes believe and
 * write.
 *
 * @param name the run's name: its directory under {@code output} and its summary's prefix
 * @param backend the store
 * @param seed the seed of every random choice of the harness
 * @param duration inject faults for at least this long, or {@code null} to stop after
 * {@code faults}
 * @param faults inject at least this many faults (a timed run goes on until it has them)
 * @param nodes how many candidate processes
 * @param timing the election timing of every node
 * @param faultTypes the faults to draw from
 * @param belief how the nodes decide that they lead
 * @param fencing whether writes carry their term to a fence
 * @param output the directory of runs and summaries
 */
record ChaosSettings(String name, Backend backend, long seed, Duration duration, int faults, int nodes,
		ElectionTiming timing, Set<FaultType> faultTypes, BeliefMode belief, boolean fencing, Path output) {

	/**
	 * Lease 2 s, renew deadline 1.5 s, retry 400 ms: a fault cycle takes a few seconds.
	 */
	static final ElectionTiming TIMING = new ElectionTiming(Duration.ofSeconds(2), Duration.ofMillis(1500),
			Duration.ofMillis(400));

	ChaosSettings {
		Objects.requireNonNull(backend, "backend");
		Objects.requireNonNull(timing, "timing");
		Objects.requireNonNull(belief, "belief");
		Objects.requireNonNull(output, "output");
		faultTypes = Set.copyOf(faultTypes);
		if (faultTypes.isEmpty()) {
			throw new IllegalArgumentException("No fault to inject");
		}
		if (nodes < 2) {
			throw new IllegalArgumentException("An election needs at least 2 nodes, not " + nodes);
		}
	}

	/** The checked configuration: every fault, library belief, fencing on. */
	static ChaosSettings safe(Backend backend, long seed, Duration duration, int faults, Path output) {
		return new ChaosSettings(backend.id(), backend, seed, duration, faults, 3, TIMING,
				EnumSet.allOf(FaultType.class), BeliefMode.LIBRARY, true, output);
	}

	/**
	 * The control experiment: nodes that trust a flag flipped by events and write without
	 * fencing, paused past their lease.
	 */
	static ChaosSettings control(Backend backend, long seed, int faults, Path output) {
		return new ChaosSettings("control-" + backend.id(), backend, seed, null, faults, 3, TIMING,
				EnumSet.of(FaultType.STOP_LEADER), BeliefMode.FLAG, false, output);
	}

	Path directory() {
		return this.output.resolve(this.name);
	}

	Path summaryFile() {
		return this.output.resolve(this.name + "-summary.json");
	}

}
