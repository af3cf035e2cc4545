package io.github.leaderelection.chaos;

import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;

import io.github.leaderelection.ElectionTiming;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

/**
 * Which faults a run of each backend draws: a replicated store's failover only where the
 * harness runs a replicated store, and link faults only where each node has a link of its
 * own to act on.
 */
class ChaosSettingsTests {

	private static final Path OUTPUT = Path.of("target/chaos-settings");

	@ParameterizedTest(name = "{0}")
	@EnumSource(names = { "REDIS_SENTINEL", "JDBC_POSTGRES_REPLICA" })
	void aReplicatedStoreRunFailsThePrimaryOverAndCutsNoLink(Backend backend) {
		assertThat(backend.isReplicated()).isTrue();
		ChaosSettings settings = ChaosSettings.safe(backend, 1, null, 1, OUTPUT);
		assertThat(settings.faultTypes()).contains(FaultType.FAILOVER_STORE, FaultType.KILL_LEADER,
				FaultType.STOP_LEADER, FaultType.RESTART_LEADER, FaultType.CLOCK_JUMP);
		assertThat(settings.faultTypes()).noneMatch(FaultType::needsNodeLink).doesNotContain(FaultType.RESTART_STORE);
	}

	@Test
	void aReplicatedMariaDbBehindTheNodesProxiesIsFailedOverAndItsLinksCut() {
		assertThat(Backend.JDBC_MARIADB_REPLICA.isReplicated()).isTrue();
		assertThat(ChaosSettings.safe(Backend.JDBC_MARIADB_REPLICA, 1, null, 1, OUTPUT).faultTypes())
			.isEqualTo(EnumSet.complementOf(EnumSet.of(FaultType.RESTART_STORE)));
	}

	@Test
	void aStoreWithoutReplicasInjectsEveryOtherFault() {
		for (Backend backend : EnumSet.complementOf(
				EnumSet.of(Backend.REDIS_SENTINEL, Backend.JDBC_POSTGRES_REPLICA, Backend.JDBC_MARIADB_REPLICA))) {
			assertThat(ChaosSettings.safe(backend, 1, null, 1, OUTPUT).faultTypes())
				.isEqualTo(EnumSet.complementOf(EnumSet.of(FaultType.FAILOVER_STORE)));
		}
	}

	@Test
	void otherTimingsKeepTheClockRatesWithinTheMarginOfEachOfThem() {
		ChaosSettings settings = ChaosSettings.safe(Backend.REDIS, 1, null, 1, OUTPUT);
		assertThat(settings.clockRates().slowest()).isEqualTo(0.525, within(1e-9));
		ChaosSettings wide = settings.withTimings(ChaosSettings.mixedTimings(3,
				new ElectionTiming(Duration.ofMillis(3200), Duration.ofMillis(1500), Duration.ofMillis(400))));
		assertThat(wide.clockRates()).isEqualTo(settings.clockRates());
		ChaosSettings narrow = settings.withTimings(ChaosSettings.mixedTimings(3,
				new ElectionTiming(Duration.ofMillis(2000), Duration.ofMillis(1800), Duration.ofMillis(400))));
		assertThat(narrow.clockRates().slowest()).isEqualTo(0.95, within(1e-9));
		assertThat(narrow.clockRates().fastest()).isEqualTo(1.25);
	}

	@Test
	void refusesAFaultItsBackendCannotInject() {
		ChaosSettings sentinel = ChaosSettings.safe(Backend.REDIS_SENTINEL, 1, null, 1, OUTPUT);
		assertThatIllegalArgumentException().isThrownBy(() -> sentinel.withFaultTypes(EnumSet.of(FaultType.CUT_LEADER)))
			.withMessageContaining("redis-sentinel backend cannot inject [cut-leader]");
		ChaosSettings redis = ChaosSettings.safe(Backend.REDIS, 1, null, 1, OUTPUT);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> redis.withFaultTypes(EnumSet.of(FaultType.FAILOVER_STORE)))
			.withMessageContaining("redis backend cannot inject [failover-store]");
	}

}
