package io.github.leaderelection.actuate;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.actuate.ActionFailedException.Kind;
import io.github.leaderelection.actuate.LeaderElectionEndpoint.ActionDescriptor;
import io.github.leaderelection.actuate.LeaderElectionEndpoint.GroupDescriptor;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link LeaderElectionEndpoint}, with two candidates sharing one in-memory
 * store.
 */
class LeaderElectionEndpointTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	// A short lease: a forced leader or re-election waits out the lease of the one who
	// led.
	private static final ElectionTiming TIMING = new ElectionTiming(Duration.ofSeconds(2), Duration.ofMillis(1500),
			Duration.ofMillis(250));

	private final InMemoryLeaseStore store = new InMemoryLeaseStore();

	private final List<LeaderElectionEngine> engines = new ArrayList<>();

	@AfterEach
	void closeEngines() {
		this.engines.forEach(LeaderElectionEngine::close);
	}

	@Test
	void describesEveryGroupThisInstanceTakesPartIn() {
		LeaderElectionEngine first = engine("first");
		LeaderElection orders = first.join("orders");
		LeaderElection billing = first.join("billing");
		first.start();
		await().atMost(TIMEOUT).until(() -> orders.isLeader() && billing.isLeader());
		LeaderElectionEndpoint endpoint = new LeaderElectionEndpoint(first, null);
		assertThat(endpoint.groups().groups()).containsOnlyKeys("billing", "orders");
		GroupDescriptor descriptor = endpoint.groups().groups().get("orders");
		assertThat(descriptor.role()).isEqualTo("LEADER");
		assertThat(descriptor.phase()).isEqualTo("leading");
		assertThat(descriptor.candidateId()).isEqualTo("first");
		assertThat(descriptor.leader()).isEqualTo("first");
		assertThat(descriptor.term()).isEqualTo(orders.leadership().orElseThrow().term());
		assertThat(descriptor.backend()).isEqualTo("in-memory");
		assertThat(descriptor.leaseRemaining()).startsWith("PT");
		assertThat(descriptor.storeReachable()).isTrue();
		assertThat(descriptor.participants()).isNull();
	}

	@Test
	void describesAFollowerWithTheLeaderItObserves() {
		LeaderElectionEngine first = startedLeader("first");
		LeaderElectionEngine second = engine("second");
		LeaderElection orders = second.join("orders");
		second.start();
		await().atMost(TIMEOUT).until(() -> orders.currentLeader().isPresent());
		GroupDescriptor descriptor = new LeaderElectionEndpoint(second, null).group("orders");
		assertThat(descriptor).isNotNull();
		assertThat(descriptor.role()).isEqualTo("FOLLOWER");
		assertThat(descriptor.phase()).isEqualTo("following");
		assertThat(descriptor.candidateId()).isEqualTo("second");
		assertThat(descriptor.leader()).isEqualTo("first");
		assertThat(descriptor.term()).isEqualTo(first.find("orders").orElseThrow().leadership().orElseThrow().term());
		assertThat(descriptor.leaseRemaining()).isNull();
	}

	@Test
	void notesSinceWhenItObservedTheLeader() {
		Clock clock = Clock.fixed(Instant.parse("2026-01-02T03:04:05.678Z"), ZoneOffset.UTC);
		LeaderElectionEngine first = engine("first");
		LeaderElectionEndpoint endpoint = new LeaderElectionEndpoint(first, null, clock);
		first.addListener(endpoint);
		LeaderElection orders = first.join("orders");
		first.start();
		await().atMost(TIMEOUT).until(() -> orders.isLeader() && endpoint.group("orders").leaderSince() != null);
		assertThat(endpoint.group("orders").leaderSince()).isEqualTo("2026-01-02T03:04:05.678Z");
		assertThat(new LeaderElectionEndpoint(first, null).group("orders").leaderSince()).isNull();
	}

	@Test
	void answersNothingForAGroupItDoesNotTakePartIn() {
		LeaderElectionEngine first = startedLeader("first");
		assertThat(new LeaderElectionEndpoint(first, null).group("billing")).isNull();
	}

	@Test
	void yieldsSoAnotherCandidateLeads() {
		LeaderElectionEngine first = startedLeader("first");
		LeaderElection second = started("second");
		ActionDescriptor result = new LeaderElectionEndpoint(first, null).act("orders", "yield", null);
		assertThat(result.outcome()).isEqualTo("yielded");
		assertThat(result.candidateId()).isEqualTo("first");
		assertThat(first.find("orders").orElseThrow().isLeader()).isFalse();
		await().atMost(TIMEOUT).until(second::isLeader);
		assertThat(new LeaderElectionEndpoint(first, null).act("orders", "yield", null).outcome())
			.isEqualTo("not-leader");
	}

	@Test
	void forcesACandidateToLead() {
		LeaderElectionEngine first = startedLeader("first");
		LeaderElection second = started("second");
		ActionDescriptor result = new LeaderElectionEndpoint(first, null).act("orders", "force-leader", "second");
		assertThat(result.outcome()).isEqualTo("forced");
		assertThat(result.candidateId()).isEqualTo("second");
		assertThat(first.find("orders").orElseThrow().isLeader()).isFalse();
		await().atMost(TIMEOUT).until(second::isLeader);
	}

	@Test
	void forcesAReElection() {
		LeaderElectionEngine first = startedLeader("first");
		long term = first.find("orders").orElseThrow().leadership().orElseThrow().term();
		ActionDescriptor result = new LeaderElectionEndpoint(first, null).act("orders", "force-reelection", null);
		assertThat(result.outcome()).isEqualTo("forced");
		LeaderElection orders = first.find("orders").orElseThrow();
		await().atMost(TIMEOUT)
			.until(() -> orders.leadership().filter((leadership) -> leadership.term() > term).isPresent());
	}

	@Test
	void showsEachGroupsLastTransitionsWithTheirReasons() {
		LeaderElectionEngine first = engine("first");
		LeaderElectionEndpoint endpoint = new LeaderElectionEndpoint(first, null);
		first.addListener(endpoint);
		LeaderElection orders = first.join("orders");
		first.start();
		await().atMost(TIMEOUT).until(orders::isLeader);
		long term = orders.leadership().orElseThrow().term();
		orders.yieldLeadership();
		await().atMost(TIMEOUT)
			.until(() -> endpoint.group("orders").history().stream().anyMatch((t) -> "revoked".equals(t.type())));
		List<LeadershipTransition> history = endpoint.group("orders").history();
		assertThat(history).anySatisfy((transition) -> {
			assertThat(transition.type()).isEqualTo("granted");
			assertThat(transition.term()).isEqualTo(term);
			assertThat(transition.leader()).isEqualTo("first");
			assertThat(Instant.parse(transition.time())).isNotNull();
		});
		assertThat(history).anySatisfy((transition) -> {
			assertThat(transition.type()).isEqualTo("revoked");
			assertThat(transition.term()).isEqualTo(term);
			assertThat(transition.reason()).isEqualTo("YIELDED");
		});
	}

	@Test
	void refusesUnknownGroupsActionsAndMissingCandidates() {
		LeaderElectionEndpoint endpoint = new LeaderElectionEndpoint(startedLeader("first"), null);
		assertThatExceptionOfType(ActionFailedException.class).isThrownBy(() -> endpoint.act("billing", "yield", null))
			.satisfies((ex) -> assertThat(ex.getMessage()).contains("[orders]"))
			.satisfies((ex) -> assertThat(ex.kind()).isEqualTo(Kind.UNKNOWN_GROUP));
		assertThatExceptionOfType(ActionFailedException.class)
			.isThrownBy(() -> endpoint.act("orders", "abdicate", null))
			.satisfies((ex) -> assertThat(ex.getMessage()).contains("yield, force-leader, force-reelection"))
			.satisfies((ex) -> assertThat(ex.kind()).isEqualTo(Kind.BAD_REQUEST));
		assertThatExceptionOfType(ActionFailedException.class)
			.isThrownBy(() -> endpoint.act("orders", "force-leader", " "))
			.satisfies((ex) -> assertThat(ex.getMessage()).contains("candidateId"))
			.satisfies((ex) -> assertThat(ex.kind()).isEqualTo(Kind.BAD_REQUEST));
		assertThatExceptionOfType(ActionFailedException.class)
			.isThrownBy(() -> endpoint.act("orders", "force-leader", "bad\nid"))
			.satisfies((ex) -> assertThat(ex.getMessage()).startsWith("Invalid candidateId"))
			.satisfies((ex) -> assertThat(ex.kind()).isEqualTo(Kind.BAD_REQUEST));
	}

	@Test
	void listsParticipantsAndRefusesToForceAnotherCandidateWhenTheStoreKnowsThem() {
		LeaderElectionEngine first = startedLeader("first");
		LeaderElectionParticipants participants = (group) -> Optional.of(List.of("first", "second"));
		LeaderElectionEndpoint endpoint = new LeaderElectionEndpoint(first, participants);
		assertThat(endpoint.group("orders").participants()).containsExactly("first", "second");
		assertThatExceptionOfType(ActionFailedException.class)
			.isThrownBy(() -> endpoint.act("orders", "force-leader", "third"))
			.satisfies((ex) -> assertThat(ex.getMessage()).contains("[first, second]"))
			.satisfies((ex) -> assertThat(ex.kind()).isEqualTo(Kind.REFUSED));
		assertThat(first.find("orders").orElseThrow().isLeader()).isTrue();
	}

	@Test
	void showsTheGroupWithoutParticipantsWhenTheStoreCannotListThem() {
		LeaderElectionParticipants failing = (group) -> {
			throw new IllegalStateException("ZooKeeper did not answer");
		};
		LeaderElectionEndpoint endpoint = new LeaderElectionEndpoint(startedLeader("first"), failing);
		assertThat(endpoint.group("orders").participants()).isNull();
		assertThat(endpoint.groups().groups()).containsKey("orders");
	}

	@Test
	void showsTheSpreadWhileBalancingAndRebalancesOnRequest() {
		LeaderElectionEngine notBalancing = engine("plain");
		assertThat(new LeaderElectionEndpoint(notBalancing, null).groups().balance()).isNull();
		assertThatExceptionOfType(ActionFailedException.class)
			.isThrownBy(() -> new LeaderElectionEndpoint(notBalancing, null).actOnInstance("rebalance"))
			.withMessageContaining("Balancing is off");
		LeaderElectionEngine first = balancing("first");
		LeaderElectionEngine second = balancing("second");
		for (LeaderElectionEngine engine : List.of(first, second)) {
			for (int i = 0; i < 4; i++) {
				engine.join("group-" + i);
			}
		}
		first.start();
		second.start();
		LeaderElectionEndpoint endpoint = new LeaderElectionEndpoint(first, null);
		await().atMost(TIMEOUT).untilAsserted(() -> {
			LeaderElectionEndpoint.BalanceDescriptor balance = endpoint.groups().balance();
			assertThat(balance).isNotNull();
			assertThat(balance.leadersByCandidate()).containsEntry("first", 2).containsEntry("second", 2);
			assertThat(balance.spread()).isZero();
		});
		ActionDescriptor result = endpoint.actOnInstance("rebalance");
		assertThat(result.action()).isEqualTo("rebalance");
		assertThat(result.outcome()).isEqualTo("rebalancing");
		assertThat(result.group()).isNull();
		assertThatExceptionOfType(ActionFailedException.class).isThrownBy(() -> endpoint.actOnInstance("shuffle"))
			.withMessageContaining("use rebalance");
	}

	private LeaderElectionEngine balancing(String candidateId) {
		LeaderElectionEngine engine = LeaderElectionEngine.builder(this.store)
			.candidateId(candidateId)
			.timing(TIMING)
			.balance(1, java.util.Map.of())
			.build();
		this.engines.add(engine);
		return engine;
	}

	private LeaderElectionEngine startedLeader(String candidateId) {
		LeaderElectionEngine engine = engine(candidateId);
		LeaderElection orders = engine.join("orders");
		engine.start();
		await().atMost(TIMEOUT).until(orders::isLeader);
		return engine;
	}

	private LeaderElection started(String candidateId) {
		LeaderElectionEngine engine = engine(candidateId);
		LeaderElection orders = engine.join("orders");
		engine.start();
		return orders;
	}

	private LeaderElectionEngine engine(String candidateId) {
		LeaderElectionEngine engine = LeaderElectionEngine.builder(this.store)
			.candidateId(candidateId)
			.timing(TIMING)
			.build();
		this.engines.add(engine);
		return engine;
	}

}
