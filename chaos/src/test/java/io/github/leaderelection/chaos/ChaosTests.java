package io.github.leaderelection.chaos;

import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the experiment against real stores: a short seeded run per backend, which fails
 * the build on any overlap, action outside a belief or term regression, and on any tick
 * of the leader-only job run twice or lost ({@link WorkChecker}).
 * {@link ConfiguredChaosRun} is the long run of one backend ({@code -Pchaos}).
 */
@Execution(ExecutionMode.CONCURRENT)
class ChaosTests {

	static final Path OUTPUT = Path.of(System.getProperty("chaos.output", "target/chaos"));

	static final long DEFAULT_SEED = 20261121L;

	static final int DEFAULT_FAULTS = 20;

	/**
	 * Each fault type the backend can inject, once, in an order the seed draws: 16 where
	 * every type applies, 8 on the replicated stores the nodes reach without a link of
	 * their own. The 10-minute runs ({@code -Pchaos}) draw each type many times.
	 */
	@ParameterizedTest(name = "{0}")
	@EnumSource(Backend.class)
	void shortRunKeepsEveryPromise(Backend backend) throws Exception {
		Set<FaultType> types = shortRunFaultTypes(backend);
		int faults = faults(types.size());
		ChaosSummary summary = new ChaosRun(
				ChaosSettings.safe(backend, seed(DEFAULT_SEED), null, faults, OUTPUT).withFaultTypes(types))
			.run();
		assertKeptEveryPromise(summary);
		assertThat(summary.faultCount()).as("faults injected").isGreaterThanOrEqualTo(faults);
	}

	/**
	 * Every fault type the backend can inject, {@code lose-store-data} among them: its
	 * runs lead only after following a group for a lease duration (see
	 * {@code ChaosRun#watchBeforeLeading}), without which a node started after the loss
	 * may lead beside the holder of the lost term.
	 */
	static Set<FaultType> shortRunFaultTypes(Backend backend) {
		return EnumSet.copyOf(backend.faultTypes());
	}

	static void assertKeptEveryPromise(ChaosSummary summary) {
		assertThat(summary.violations()).as(summary.table()).isEmpty();
		assertThat(summary.unexpectedExits()).as("nodes that exited by themselves\n" + summary.table()).isZero();
		assertThat(summary.actionsAccepted()).as("accepted leader-only actions\n" + summary.table()).isPositive();
		assertThat(summary.beliefIntervals()).as("beliefs\n" + summary.table()).isGreaterThan(1);
	}

	static long seed(long fallback) {
		String seed = System.getProperty("chaos.seed", "");
		return seed.isBlank() ? fallback : Long.parseLong(seed.trim());
	}

	static int groups(int fallback) {
		String groups = System.getProperty("chaos.groups", "");
		return groups.isBlank() ? fallback : Integer.parseInt(groups.trim());
	}

	static boolean balance(boolean fallback) {
		String balance = System.getProperty("chaos.balance", "");
		return balance.isBlank() ? fallback : Boolean.parseBoolean(balance.trim());
	}

	static int faults(int fallback) {
		String faults = System.getProperty("chaos.faults", "");
		return faults.isBlank() ? fallback : Integer.parseInt(faults.trim());
	}

	/**
	 * "600s", "10m", "1h", "PT10M" or a number of seconds; blank for none (stop after the
	 * fault count).
	 */
	static Duration duration(String value) {
		String text = value.trim().toLowerCase(Locale.ROOT);
		if (text.isEmpty()) {
			return null;
		}
		if (text.startsWith("pt")) {
			return Duration.parse(text.toUpperCase(Locale.ROOT));
		}
		char unit = text.charAt(text.length() - 1);
		if (Character.isDigit(unit)) {
			return Duration.ofSeconds(Long.parseLong(text));
		}
		long amount = Long.parseLong(text.substring(0, text.length() - 1));
		return switch (unit) {
			case 's' -> Duration.ofSeconds(amount);
			case 'm' -> Duration.ofMinutes(amount);
			case 'h' -> Duration.ofHours(amount);
			default -> throw new IllegalArgumentException("Unknown duration '" + value + "': use 600s, 10m or 1h");
		};
	}

}
