package io.github.leaderelection.chaos;

import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

import io.github.leaderelection.ElectionTiming;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The long run of one backend, which {@code -Pchaos} runs instead of the default build's
 * tests: {@code chaos.backend}, {@code chaos.duration}, {@code chaos.faults} (at least
 * this many, even if that takes longer than the duration) and {@code chaos.seed} describe
 * it; {@code chaos.fault-types} (comma-separated) limits the faults to those;
 * {@code chaos.groups} (default 1) puts every node in that many groups, and
 * {@code chaos.balance} ({@code true}; default off) has them spread their leadership. Its
 * name does not end in "Tests", so the default build leaves it out rather than reporting
 * it skipped.
 */
class ConfiguredChaosRun {

	@Test
	void configuredRunKeepsEveryPromise() throws Exception {
		String name = System.getProperty("chaos.backend", "");
		if (name.isBlank()) {
			throw new IllegalArgumentException("Say which store to run against: -Dchaos.backend=<jdbc-mariadb|"
					+ "jdbc-postgres|redis|zookeeper|etcd>");
		}
		Backend backend = Backend.of(name);
		Duration duration = ChaosTests.duration(System.getProperty("chaos.duration", ""));
		int faults = ChaosTests.faults(ChaosTests.DEFAULT_FAULTS);
		ChaosSettings settings = ChaosSettings.safe(backend, ChaosTests.seed(ChaosTests.DEFAULT_SEED), duration, faults,
				ChaosTests.OUTPUT);
		int groups = ChaosTests.groups(1);
		boolean balance = ChaosTests.balance(false);
		if (groups != 1 || balance) {
			settings = settings.withGroups(groups, balance);
		}
		String timing = System.getProperty("chaos.timing", "");
		if (!timing.isBlank()) {
			// lease/renew deadline/retry in milliseconds, scaled for each node as usual
			long[] millis = Arrays.stream(timing.split("/")).mapToLong(Long::parseLong).toArray();
			settings = settings.withTimings(ChaosSettings.mixedTimings(settings.nodes(), new ElectionTiming(
					Duration.ofMillis(millis[0]), Duration.ofMillis(millis[1]), Duration.ofMillis(millis[2]))));
		}
		String types = System.getProperty("chaos.fault-types", "");
		if (!types.isBlank()) {
			// Only these faults, to chase what one of them does.
			Set<FaultType> only = Arrays.stream(types.split(","))
				.map(String::trim)
				.map(FaultType::of)
				.collect(Collectors.toSet());
			settings = settings.withFaultTypes(only);
		}
		ChaosSummary summary = new ChaosRun(settings).run();
		ChaosTests.assertKeptEveryPromise(summary);
		assertThat(summary.faultCount()).as("faults injected").isGreaterThanOrEqualTo(faults);
	}

}
