package io.github.leaderelection.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.actuate.ActionFailedException.Kind;
import io.github.leaderelection.actuate.LeaderElectionEndpoint.GroupDescriptor;
import io.github.leaderelection.actuate.LeaderElectionEndpoint.GroupsDescriptor;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import io.github.leaderelection.spi.Lease;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Tests for what {@link LeaderElectionEndpoint} does with what a request sends: checked
 * before it is logged or acted on, counted and limited per group, and read within one
 * retry period whatever the store does.
 */
@ExtendWith(OutputCaptureExtension.class)
class EndpointHardeningTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final ElectionTiming TIMING = new ElectionTiming(Duration.ofSeconds(3), Duration.ofSeconds(2),
			Duration.ofMillis(500));

	private final List<LeaderElectionEngine> engines = new ArrayList<>();

	private final CountDownLatch unblock = new CountDownLatch(1);

	@AfterEach
	void closeEngines() {
		this.unblock.countDown();
		this.engines.forEach(LeaderElectionEngine::close);
	}

	@Test
	void refusesControlCharactersAndLongValuesBeforeLoggingThem(CapturedOutput output) {
		LeaderElectionEndpoint endpoint = new LeaderElectionEndpoint(startedLeader("first", new InMemoryLeaseStore()),
				null);
		String forged = "x\n2026-11-28 INFO FORGED LINE";
		assertThatExceptionOfType(ActionFailedException.class)
			.isThrownBy(() -> endpoint.act("orders", "force-leader", forged))
			.satisfies((ex) -> assertThat(ex.kind()).isEqualTo(Kind.BAD_REQUEST))
			.satisfies((ex) -> assertThat(ex.getMessage()).startsWith("Invalid candidateId")
				.contains("\\n2026")
				.doesNotContain("\n"));
		assertThatExceptionOfType(ActionFailedException.class)
			.isThrownBy(() -> endpoint.act("orders", "force-leader", "nul\0byte"))
			.satisfies((ex) -> assertThat(ex.getMessage()).contains("\\u0000").doesNotContain("\0"));
		String huge = "a".repeat(10_000);
		assertThatExceptionOfType(ActionFailedException.class)
			.isThrownBy(() -> endpoint.act("orders", "force-leader", huge))
			.satisfies((ex) -> assertThat(ex.kind()).isEqualTo(Kind.BAD_REQUEST))
			.satisfies((ex) -> assertThat(ex.getMessage()).contains("10000 characters").hasSizeLessThan(400));
		assertThatExceptionOfType(ActionFailedException.class).isThrownBy(() -> endpoint.act("ord\rers", "yield", null))
			.satisfies((ex) -> assertThat(ex.kind()).isEqualTo(Kind.BAD_REQUEST))
			.satisfies((ex) -> assertThat(ex.getMessage()).startsWith("Invalid group").contains("\\r"));
		assertThatExceptionOfType(ActionFailedException.class)
			.isThrownBy(() -> endpoint.act("orders", "yield\nFORGED", null))
			.satisfies((ex) -> assertThat(ex.getMessage()).doesNotContain("\n"));
		assertThat(output).doesNotContain("FORGED").doesNotContain("\0").doesNotContain(huge);
		assertThat(this.engines.get(0).find("orders").orElseThrow().isLeader()).isTrue();
	}

	@Test
	void countsEachGroupsActionsAndRefusesThoseBeyondTheLimitSayingWhenToRetry(CapturedOutput output) {
		LeaderElectionEngine first = startedLeader("first", new InMemoryLeaseStore());
		List<String> counted = new ArrayList<>();
		LeaderElectionEndpoint endpoint = new LeaderElectionEndpoint(first, null, java.time.Clock.systemUTC(),
				new OperatorActions(3, Duration.ofMinutes(1)),
				(group, action, outcome) -> counted.add(group + " " + action + " " + outcome));
		endpoint.act("orders", "force-reelection", null);
		endpoint.act("orders", "force-reelection", null);
		endpoint.act("orders", "yield", null);
		assertThatExceptionOfType(ActionFailedException.class)
			.isThrownBy(() -> endpoint.act("orders", "force-reelection", null))
			.satisfies((ex) -> assertThat(ex.kind()).isEqualTo(Kind.TOO_MANY_ACTIONS))
			.satisfies((ex) -> assertThat(ex.kind().status()).isEqualTo(429))
			.satisfies((ex) -> assertThat(ex.getMessage()).contains("retry in")
				.contains("leader-election.endpoint.max-actions-per-group"))
			.satisfies((ex) -> assertThat(ex.retryAfter()).isPositive().isLessThanOrEqualTo(Duration.ofMinutes(1)));
		assertThat(counted).containsExactly("orders force-reelection done", "orders force-reelection done",
				"orders yield done", "orders force-reelection limited");
		assertThat(endpoint.group("orders").history()).filteredOn((t) -> "operator-action".equals(t.type()))
			.extracting(LeadershipTransition::reason)
			.containsExactly("force-reelection: asked", "force-reelection: asked", "yield: asked",
					"force-reelection: limited");
		assertThat(output).contains("Refused the force-reelection of group 'orders'");
	}

	@Test
	void operatorActionsLeaveTheWindowAfterItPasses() {
		AtomicLong now = new AtomicLong();
		OperatorActions actions = new OperatorActions(2, Duration.ofSeconds(10), now::get);
		assertThat(actions.tryCount("orders")).isEmpty();
		now.addAndGet(Duration.ofSeconds(4).toNanos());
		assertThat(actions.tryCount("orders")).isEmpty();
		assertThat(actions.tryCount("orders")).contains(Duration.ofSeconds(6));
		assertThat(actions.tryCount("billing")).isEmpty();
		now.addAndGet(Duration.ofSeconds(6).toNanos());
		assertThat(actions.tryCount("orders")).isEmpty();
	}

	@Test
	void readsEveryGroupWithinAboutOneRetryPeriodWhileTheStoreHangs() {
		HangingLeaseStore store = new HangingLeaseStore(this.unblock);
		LeaderElectionEngine engine = LeaderElectionEngine.builder(store).candidateId("first").timing(TIMING).build();
		this.engines.add(engine);
		List<LeaderElection> elections = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			elections.add(engine.join("group-" + i));
		}
		engine.start();
		await().atMost(TIMEOUT).until(() -> elections.stream().allMatch(LeaderElection::isLeader));
		LeaderElectionEndpoint endpoint = new LeaderElectionEndpoint(engine, store);
		assertThat(endpoint.groups().groups().get("group-0").participants()).containsExactly("first");
		assertThat(endpoint.groups().groups().get("group-0").participantsCurrent()).isTrue();
		store.hang();
		CompletableFuture<GroupsDescriptor> read = CompletableFuture.supplyAsync(endpoint::groups);
		// One retry period (500 ms) for the store in total, with room for a loaded
		// machine; one store timeout per group would take minutes.
		await().atMost(TIMING.retryPeriod().plusSeconds(2)).until(read::isDone);
		Map<String, GroupDescriptor> groups = read.join().groups();
		assertThat(groups).hasSize(20);
		assertThat(groups.values()).allSatisfy((group) -> {
			assertThat(group.participantsCurrent()).isFalse();
			assertThat(group.participants()).containsExactly("first");
			assertThat(group.leader()).isEqualTo("first");
			assertThat(group.viewAge()).startsWith("PT");
		});
		CompletableFuture<GroupDescriptor> one = CompletableFuture.supplyAsync(() -> endpoint.group("group-3"));
		await().atMost(TIMING.retryPeriod().plusSeconds(2)).until(one::isDone);
		assertThat(one.join().participantsCurrent()).isFalse();
	}

	private LeaderElectionEngine startedLeader(String candidateId, InMemoryLeaseStore store) {
		LeaderElectionEngine engine = LeaderElectionEngine.builder(store)
			.candidateId(candidateId)
			.timing(TIMING)
			.build();
		this.engines.add(engine);
		LeaderElection orders = engine.join("orders");
		engine.start();
		await().atMost(TIMEOUT).until(orders::isLeader);
		return engine;
	}

	/**
	 * An in-memory store whose reads and participant lists block, once hung, until the
	 * test ends, as a store that stopped answering does before its timeouts.
	 */
	static class HangingLeaseStore extends ForwardingLeaseStore implements LeaderElectionParticipants {

		private final CountDownLatch unblock;

		private volatile boolean hung;

		HangingLeaseStore(CountDownLatch unblock) {
			super(new InMemoryLeaseStore());
			this.unblock = unblock;
		}

		void hang() {
			this.hung = true;
		}

		@Override
		public Optional<Lease> read(String group, Duration timeout) {
			block();
			return super.read(group, timeout);
		}

		@Override
		public Optional<List<String>> participants(String group) {
			block();
			return Optional.of(List.of("first"));
		}

		private void block() {
			if (this.hung) {
				try {
					this.unblock.await(1, TimeUnit.MINUTES);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		}

	}

}
