package io.github.leaderelection.engine;

import java.time.Duration;

import io.github.leaderelection.LeaderElectionException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class StoreHealthTests {

	private final StoreHealth health = new StoreHealth("orders", new StoreOutages("memory", Duration.ofSeconds(2)));

	@Test
	void countsTheFailuresInARowUntilTheStoreAnswers() {
		assertThat(this.health.hasAnswered()).isFalse();
		assertThat(this.health.sinceAnswered(1_000)).isEmpty();
		this.health.failed(new LeaderElectionException("down"));
		this.health.failed(new LeaderElectionException("still down"));
		assertThat(this.health.consecutiveFailures()).isEqualTo(2);
		this.health.answered(1_000);
		assertThat(this.health.consecutiveFailures()).isZero();
		assertThat(this.health.hasAnswered()).isTrue();
		assertThat(this.health.sinceAnswered(1_500)).contains(Duration.ofNanos(500));
	}

	@Test
	void aFailureAfterAnAnswerKeepsWhenTheStoreLastAnswered() {
		this.health.answered(1_000);
		this.health.failed(new LeaderElectionException("down"));
		assertThat(this.health.hasAnswered()).isTrue();
		assertThat(this.health.sinceAnswered(3_000)).contains(Duration.ofNanos(2_000));
		assertThat(this.health.consecutiveFailures()).isOne();
	}

}
