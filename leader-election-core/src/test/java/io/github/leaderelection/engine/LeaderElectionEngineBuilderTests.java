package io.github.leaderelection.engine;

import java.time.Duration;

import io.github.leaderelection.memory.InMemoryLeaseStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for what {@link LeaderElectionEngine.Builder} refuses before an engine exists.
 */
class LeaderElectionEngineBuilderTests {

	@Test
	void refusesANegativeShutdownTimeoutThatWouldAbortClose() {
		assertThatIllegalArgumentException().isThrownBy(
				() -> LeaderElectionEngine.builder(new InMemoryLeaseStore()).shutdownTimeout(Duration.ofSeconds(-1)))
			.withMessage("shutdown-timeout must be positive but is PT-1S");
	}

	@Test
	void refusesAZeroShutdownTimeoutThatWouldWaitForever() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LeaderElectionEngine.builder(new InMemoryLeaseStore()).shutdownTimeout(Duration.ZERO))
			.withMessage("shutdown-timeout must be positive but is PT0S");
	}

}
