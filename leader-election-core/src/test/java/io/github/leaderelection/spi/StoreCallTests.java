package io.github.leaderelection.spi;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import io.github.leaderelection.LeaderElectionException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class StoreCallTests {

	@Test
	void anAnswerWithinTheTimeoutIsReturned() {
		StoreCall call = StoreCall.start("read group 'orders'", "in etcd", Duration.ofSeconds(5));
		assertThat(call.await(CompletableFuture.completedFuture("lease"))).isEqualTo("lease");
		assertThat(call.isOver()).isFalse();
		assertThat(call.remaining()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(5));
	}

	@Test
	void anAnswerThatDoesNotComeInTimeIsGivenUpWithOneWording() {
		StoreCall call = StoreCall.start("renew the lease of group 'orders'", "in etcd", Duration.ofMillis(20));
		CompletableFuture<String> never = new CompletableFuture<>();
		assertThatExceptionOfType(LeaderElectionException.class).isThrownBy(() -> call.await(never))
			.withMessage("Could not renew the lease of group 'orders' in etcd within the call's timeout");
		assertThat(never).isCancelled();
		assertThat(call.isOver()).isTrue();
		assertThatExceptionOfType(LeaderElectionException.class).isThrownBy(call::remaining)
			.withMessageContaining("within the call's timeout");
	}

	@Test
	void aFailedAnswerSaysWhatFailedWhereAndWhy() {
		StoreCall call = StoreCall.start("read 3 groups", "in table leader_election", Duration.ofSeconds(5));
		assertThatExceptionOfType(LeaderElectionException.class)
			.isThrownBy(() -> call.await(CompletableFuture.failedFuture(new IllegalStateException("refused"))))
			.withMessage("Could not read 3 groups in table leader_election: refused")
			.withCauseInstanceOf(IllegalStateException.class);
		LeaderElectionException already = new LeaderElectionException("already worded");
		assertThat(call.failed(already)).isSameAs(already);
	}

	@Test
	void anInterruptedWaitKeepsTheInterruptAndSaysWhatWasGivenUp() {
		StoreCall call = StoreCall.start("release the lease of group 'orders'", "in Redis", Duration.ofSeconds(5));
		Thread.currentThread().interrupt();
		try {
			assertThatExceptionOfType(LeaderElectionException.class)
				.isThrownBy(() -> call.await(new CompletableFuture<>()))
				.withMessage("Interrupted while trying to release the lease of group 'orders' in Redis");
			assertThat(Thread.currentThread().isInterrupted()).isTrue();
		}
		finally {
			Thread.interrupted();
		}
	}

}
