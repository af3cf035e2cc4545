package io.github.leaderelection.aop;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.OnlyOnLeader;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.Lease;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.aop.framework.ProxyFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link OnlyOnLeaderInterceptor} on an engine without Spring's context.
 */
class OnlyOnLeaderInterceptorTests {

	private final InMemoryLeaseStore store = new InMemoryLeaseStore();

	private final LeaderElectionEngine engine = LeaderElectionEngine.builder(this.store)
		.candidateId("node-1")
		.shutdownTimeout(Duration.ofSeconds(20))
		.build();

	private final OnlyOnLeaderInterceptor interceptor = new OnlyOnLeaderInterceptor(() -> this.engine,
			() -> "default", () -> Duration.ofSeconds(20));

	private final Job target = new Job();

	private final Job job = proxy(this.target);

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void returnsEmptyOrDefaultValueForSkippedCalls() {
		assertThat(OnlyOnLeaderInterceptor.skippedResult(void.class)).isNull();
		assertThat(OnlyOnLeaderInterceptor.skippedResult(String.class)).isNull();
		assertThat(OnlyOnLeaderInterceptor.skippedResult(Optional.class)).isEqualTo(Optional.empty());
		assertThat(OnlyOnLeaderInterceptor.skippedResult(OptionalInt.class)).isEqualTo(OptionalInt.empty());
		assertThat(OnlyOnLeaderInterceptor.skippedResult(OptionalLong.class)).isEqualTo(OptionalLong.empty());
		assertThat(OnlyOnLeaderInterceptor.skippedResult(OptionalDouble.class)).isEqualTo(OptionalDouble.empty());
		assertThat(OnlyOnLeaderInterceptor.skippedResult(boolean.class)).isEqualTo(false);
		assertThat(OnlyOnLeaderInterceptor.skippedResult(char.class)).isEqualTo('\0');
		assertThat(OnlyOnLeaderInterceptor.skippedResult(byte.class)).isEqualTo((byte) 0);
		assertThat(OnlyOnLeaderInterceptor.skippedResult(short.class)).isEqualTo((short) 0);
		assertThat(OnlyOnLeaderInterceptor.skippedResult(int.class)).isEqualTo(0);
		assertThat(OnlyOnLeaderInterceptor.skippedResult(long.class)).isEqualTo(0L);
		assertThat(OnlyOnLeaderInterceptor.skippedResult(float.class)).isEqualTo(0f);
		assertThat(OnlyOnLeaderInterceptor.skippedResult(double.class)).isEqualTo(0d);
	}

	@Test
	void joinsGroupOfFirstCallWhenNotJoinedBefore() {
		assertThat(this.engine.find("late")).isEmpty();
		assertThat(this.job.late()).isNull();
		assertThat(this.engine.find("late")).isPresent();
	}

	@Test
	void waitsOnShutdownUntilRunningCallReturnsBeforeReleasingLease() throws Exception {
		LeaderElection election = startLeading();
		CompletableFuture<Void> call = CompletableFuture.runAsync(this.job::block);
		assertThat(this.target.started.await(20, TimeUnit.SECONDS)).isTrue();
		CompletableFuture<Void> closing = CompletableFuture.runAsync(this.engine::close);
		await().atMost(Duration.ofSeconds(20)).until(() -> !election.isLeader());
		Thread.sleep(200);
		assertThat(closing).isNotDone();
		assertThat(holder()).contains("node-1");
		this.target.release.countDown();
		call.get(20, TimeUnit.SECONDS);
		closing.get(20, TimeUnit.SECONDS);
		assertThat(holder()).isEmpty();
	}

	@Test
	void doesNotInterruptThreadOfCallThatAlreadyReturned() {
		LeaderElection election = startLeading();
		assertThat(this.job.interruptible()).isEqualTo("ran");
		election.yieldLeadership();
		await().pollDelay(Duration.ofMillis(200)).atMost(Duration.ofSeconds(5)).until(() -> true);
		assertThat(Thread.interrupted()).isFalse();
	}

	private LeaderElection startLeading() {
		LeaderElection election = this.engine.join("default");
		this.engine.addListener(this.interceptor);
		this.engine.start();
		await().atMost(Duration.ofSeconds(20)).until(election::isLeader);
		return election;
	}

	private Optional<String> holder() {
		return this.store.read("default", Duration.ofSeconds(1)).map(Lease::holder);
	}

	private Job proxy(Job target) {
		ProxyFactory factory = new ProxyFactory(target);
		factory.setProxyTargetClass(true);
		factory.addAdvisor(new OnlyOnLeaderAdvisor(this.interceptor));
		return (Job) factory.getProxy();
	}

	public static class Job {

		final CountDownLatch started = new CountDownLatch(1);

		final CountDownLatch release = new CountDownLatch(1);

		@OnlyOnLeader(group = "late")
		public String late() {
			return "ran";
		}

		@OnlyOnLeader
		public void block() {
			this.started.countDown();
			try {
				this.release.await(20, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

		@OnlyOnLeader(interruptOnRevoke = true)
		public String interruptible() {
			return "ran";
		}

	}

}
