package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.github.leaderelection.engine.TestEngines.TIMING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Balancing on virtual time: candidates that join, leave, crash, weigh more or are
 * preferred for a group, with never two leaders of a group at once and nothing moving
 * once the spread is within one.
 */
class BalancingTests {

	private static final int GROUPS = 100;

	private static final Duration STEP = Duration.ofMillis(10);

	private static final Duration WAIT = Duration.ofSeconds(60);

	private final VirtualElectionScheduler time = new VirtualElectionScheduler();

	private final InMemoryLeaseStore store = new InMemoryLeaseStore(this.time::nanoTime);

	private final TestEngines engines = new TestEngines(this.time);

	private final Map<String, List<LeaderElection>> candidates = new HashMap<>();

	private final List<LeaderElectionEngine> started = new ArrayList<>();

	private final AtomicInteger grants = new AtomicInteger();

	private final AtomicInteger handOvers = new AtomicInteger();

	@AfterEach
	void closeEngines() {
		this.engines.close();
	}

	@Test
	void candidatesThatJoinGetTheirShareWithinAFewRetryPeriodsAndAJoinerMovesAtMostItsShare() {
		start("a", this.store, 1, Map.of());
		advanceUntil(() -> led("a") == GROUPS);
		start("b", this.store, 1, Map.of());
		start("c", this.store, 1, Map.of());
		advanceUntil(() -> spread() <= 1);
		// Settle: a last hand-over among a, b and c may still be on its way, and is not
		// the joiner's.
		advance(TIMING.retryPeriod().multipliedBy(4));
		awaitEvents();
		this.handOvers.set(0);
		start("d", this.store, 1, Map.of());
		long joined = this.time.nanoTime();
		advanceUntil(() -> spread() <= 1 && led("d") >= GROUPS / 4);
		Duration took = Duration.ofNanos(this.time.nanoTime() - joined);
		awaitEvents();
		assertThat(took).as("time to spread after the last join")
			.isLessThanOrEqualTo(TIMING.retryPeriod().multipliedBy(5));
		assertThat(this.handOvers).as("groups moved for the joiner").hasValueLessThanOrEqualTo(GROUPS / 4);
		assertThat(leaders()).isEqualTo(GROUPS);
	}

	@Test
	void nothingMovesOnceTheSpreadIsWithinOneOverAThousandPeriods() {
		for (String id : List.of("a", "b", "c")) {
			start(id, this.store, 1, Map.of());
		}
		advanceUntil(() -> spread() <= 1 && leaders() == GROUPS);
		// Settle: a last hand-over may still be on its way.
		advance(TIMING.retryPeriod().multipliedBy(4));
		awaitEvents();
		int grantsBefore = this.grants.get();
		int handOversBefore = this.handOvers.get();
		advance(TIMING.retryPeriod().multipliedBy(1000), Duration.ofMillis(50));
		awaitEvents();
		assertThat(this.grants.get() - grantsBefore).as("grants over 1,000 periods").isZero();
		assertThat(this.handOvers.get() - handOversBefore).as("hand-overs over 1,000 periods").isZero();
		assertThat(spread()).isLessThanOrEqualTo(1);
	}

	@Test
	void theGroupsOfACandidateThatLeavesOrIsCutOffAreFailedOverThenSpread() {
		FaultyLeaseStore cutOff = this.engines.faulty(new FaultyLeaseStore(this.store));
		start("a", this.store, 1, Map.of());
		start("b", this.store, 1, Map.of());
		start("c", this.store, 1, Map.of());
		LeaderElectionEngine d = start("d", cutOff, 1, Map.of());
		advanceUntil(() -> spread() <= 1 && leaders() == GROUPS);

		cutOff.fail();
		long failed = this.time.nanoTime();
		advanceUntil(() -> ledBy(List.of("a", "b", "c")) == GROUPS);
		assertThat(Duration.ofNanos(this.time.nanoTime() - failed)).as("failover")
			.isLessThanOrEqualTo(TIMING.leaseDuration().plus(TIMING.retryPeriod()));
		advanceUntil(() -> spread(List.of("a", "b", "c")) <= 1);
		assertThat(d.isRunning()).isTrue();
		this.candidates.remove("d");

		closeEngineOf("c");
		advanceUntil(() -> ledBy(List.of("a", "b")) == GROUPS && spread(List.of("a", "b")) <= 1);
	}

	@Test
	void theGroupsOfACandidateThatStopsAreTakenAtOnceThoughTheLastViewListsItBelowItsShare() {
		for (String id : List.of("a", "b", "c")) {
			start(id, this.store, 1, Map.of());
		}
		advanceUntil(() -> spread() <= 1 && leaders() == GROUPS);
		advance(TIMING.retryPeriod().multipliedBy(4));
		awaitEvents();
		// 34, 33 and 33 of 100 groups: the one stopping leads 33, below the ceiling of
		// its share, and so does one of the two others, which the last view shows at its
		// share, with the one stopping below it: it would hold the groups back for the
		// one stopping, had it not listed the live candidates again.
		List<String> atFloor = List.of("a", "b", "c").stream().filter((id) -> led(id) == GROUPS / 3).toList();
		assertThat(atFloor).hasSize(2);
		String stopping = atFloor.get(0);
		List<String> staying = List.of("a", "b", "c").stream().filter((id) -> !id.equals(stopping)).toList();
		closeEngineOf(stopping);
		long stopped = this.time.nanoTime();
		advanceUntil(() -> ledBy(staying) == GROUPS);
		assertThat(Duration.ofNanos(this.time.nanoTime() - stopped))
			.as("time until the groups of a candidate that stopped gracefully are led again")
			.isLessThan(TIMING.retryPeriod().dividedBy(2));
	}

	@Test
	void aCandidateThatAnnouncesItselfButNeverLeadsMakesGroupsMoveRarelyAndNeverLeavesThemLeaderless() {
		LeaseStore neverLeads = neverLeads();
		for (String id : List.of("a", "b", "c")) {
			start(id, this.store, 1, Map.of());
		}
		advanceUntil(() -> spread() <= 1 && leaders() == GROUPS);
		awaitEvents();
		start("d", neverLeads, 1, Map.of());
		int handOversBefore = this.handOvers.get();
		int periods = 1000;
		int leaderless = 0;
		int movedInFirstHalf = 0;
		for (int i = 0; i < periods; i++) {
			advance(TIMING.retryPeriod(), Duration.ofMillis(50));
			if (leaders() < GROUPS) {
				leaderless++;
			}
			if (i == periods / 2) {
				movedInFirstHalf = this.handOvers.get() - handOversBefore;
			}
		}
		awaitEvents();
		int moved = this.handOvers.get() - handOversBefore;
		// d gets one group per round (from the most loaded candidate, as each candidate
		// sees it) until it has taken one, and after three rounds in which it took
		// nothing each candidate leaves it out, for 4, 8, ... 512 periods: at most 8
		// episodes of at most 4 rounds in 1,000 periods, 2 of them in the second half.
		// A probe that comes back to another candidate than its giver may cost one more
		// move to even the others out, and leaves its group without a leader for at most
		// the period the others hold back, and the period until the next read.
		int perEpisode = 4 * 3 * 2;
		assertThat(moved).as("groups handed over in %d periods", periods).isLessThanOrEqualTo(8 * perEpisode);
		assertThat(moved - movedInFirstHalf).as("groups handed over in the second half")
			.isLessThanOrEqualTo(2 * perEpisode);
		assertThat(leaderless).as("period ends with a group without leader").isLessThanOrEqualTo(2 * moved);
		assertThat(leaders()).isEqualTo(GROUPS);
	}

	@Test
	void aGroupPinnedToACandidateThatNeverLeadsIsHandedToItRarelyAndWaitsAtMostOneRetryPeriodEachTime() {
		LeaseStore neverLeads = neverLeads();
		Map<String, String> pinned = Map.of("group-0", "c");
		start("a", this.store, 1, pinned);
		start("b", this.store, 1, pinned);
		advanceUntil(() -> leaders() == GROUPS);
		start("c", neverLeads, 1, pinned);
		int handOversBefore = this.handOvers.get();
		int periods = 1000;
		long leaderlessSince = 0;
		long longestLeaderless = 0;
		long start = this.time.nanoTime();
		long half = start + TIMING.retryPeriod().multipliedBy(periods / 2).toNanos();
		long end = start + TIMING.retryPeriod().multipliedBy(periods).toNanos();
		int movedInFirstHalf = -1;
		while (this.time.nanoTime() < end) {
			if (movedInFirstHalf < 0 && this.time.nanoTime() >= half) {
				awaitEvents();
				movedInFirstHalf = this.handOvers.get() - handOversBefore;
			}
			step(STEP);
			boolean led = this.candidates.values().stream().anyMatch((elections) -> elections.get(0).isLeader());
			if (!led && leaderlessSince == 0) {
				leaderlessSince = this.time.nanoTime();
			}
			else if (led && leaderlessSince != 0) {
				longestLeaderless = Math.max(longestLeaderless, this.time.nanoTime() - leaderlessSince);
				leaderlessSince = 0;
			}
		}
		awaitEvents();
		int moved = this.handOvers.get() - handOversBefore;
		assertThat(Duration.ofNanos(longestLeaderless)).as("longest time group-0 waited for a leader")
			.isLessThanOrEqualTo(TIMING.retryPeriod().plus(STEP.multipliedBy(2)));
		// As for a candidate that never leads and is given groups (see above): after
		// three rounds in which it took nothing, each candidate leaves it out, for 4, 8,
		// ... 512 periods, and a group pinned to one left out is not handed to it. Each
		// time the group is free, the candidates hold back one retry period for the one
		// it is pinned to (the store tells them at once that it is free), no longer.
		int perEpisode = 4 * 3 * 2;
		assertThat(moved).as("groups handed over in %d periods", periods).isLessThanOrEqualTo(8 * perEpisode);
		assertThat(moved - movedInFirstHalf).as("groups handed over in the second half")
			.isLessThanOrEqualTo(2 * perEpisode);
	}

	@Test
	void weightsAndPreferredLeadersShapeTheSpread() {
		start("a", this.store, 2, Map.of("group-7", "c"));
		advanceUntil(() -> led("a") == GROUPS);
		start("b", this.store, 1, Map.of("group-7", "c"));
		start("c", this.store, 1, Map.of("group-7", "c"));
		advanceUntil(() -> Math.abs(led("a") - GROUPS / 2) <= 1 && Math.abs(led("b") - GROUPS / 4) <= 1
				&& Math.abs(led("c") - GROUPS / 4) <= 1 && this.candidates.get("c").get(7).isLeader()
				&& leaders() == GROUPS);
		assertThat(leaders()).isEqualTo(GROUPS);
	}

	/**
	 * The joiner's first join takes a while (as joining a hundred groups on ZooKeeper
	 * takes a second or more on a busy machine), and a group handed to it then would go
	 * without a leader until it is done. The join advances the clock itself: the other
	 * candidate's rounds run meanwhile.
	 */
	@Test
	void aCandidateIsHandedNothingUntilItHasJoinedItsGroups() {
		int groups = 10;
		AtomicInteger handedOver = new AtomicInteger();
		AtomicInteger handedOverWhileJoining = new AtomicInteger(-1);
		AtomicBoolean ledAllWhileJoining = new AtomicBoolean();
		List<LeaderElection> ofA = new ArrayList<>();
		List<LeaderElection> ofD = new ArrayList<>();
		LeaderElectionEngine a = LeaderElectionEngine.builder(this.store)
			.candidateId("a")
			.timing(TIMING)
			.scheduler(this.time)
			.balance(1, Map.of())
			.listener(new LeaderElectionListener() {

				@Override
				public void revoked(Leadership leadership, RevocationReason reason) {
					if (reason == RevocationReason.REBALANCED) {
						handedOver.incrementAndGet();
					}
				}

			})
			.build();
		this.engines.track(a);
		this.started.add(a);
		AtomicBoolean firstJoin = new AtomicBoolean(true);
		LeaseStore slowToJoin = new ForwardingLeaseStore(this.store) {

			@Override
			public void join(String group, String candidateId, Duration timeout) {
				if (firstJoin.compareAndSet(true, false)) {
					advanceUntil(() -> a.leadersByCandidate().containsKey("d"));
					// Eight rounds in which a sees d, whose first join is still on its
					// way: enough for a to hand d its share, were d counted.
					BalancingTests.this.time.advance(TIMING.retryPeriod().multipliedBy(8));
					awaitEvents();
					handedOverWhileJoining.set(handedOver.get());
					ledAllWhileJoining.set(ofA.stream().allMatch(LeaderElection::isLeader));
				}
				super.join(group, candidateId, timeout);
			}

		};
		LeaderElectionEngine d = LeaderElectionEngine.builder(slowToJoin)
			.candidateId("d")
			.timing(TIMING)
			.scheduler(this.time)
			.balance(1, Map.of())
			.build();
		this.engines.track(d);
		this.started.add(d);
		for (int i = 0; i < groups; i++) {
			ofA.add(a.join("group-" + i));
			ofD.add(d.join("group-" + i));
		}
		a.start();
		advanceUntil(() -> ofA.stream().allMatch(LeaderElection::isLeader));
		d.start();
		advanceUntil(() -> handedOverWhileJoining.get() >= 0);
		assertThat(handedOverWhileJoining).as("groups handed to a candidate still joining").hasValue(0);
		assertThat(ledAllWhileJoining).as("a led every group meanwhile").isTrue();
		advanceUntil(() -> ofD.stream().filter(LeaderElection::isLeader).count() == groups / 2
				&& ofA.stream().filter(LeaderElection::isLeader).count() == groups / 2);
	}

	@Test
	void balancingRefusesToStartOnAStoreThatCannotListCandidates() {
		LeaseStore unlisted = new ForwardingLeaseStore(this.store) {

			@Override
			public Map<String, Integer> keepCandidateAlive(String candidateId, int weight, Duration ttl,
					Duration timeout) {
				throw new UnsupportedOperationException("The test store cannot list live candidates");
			}

		};
		LeaderElectionEngine engine = this.engines.engine("a", unlisted);
		assertThatIllegalStateException().isThrownBy(() -> {
			LeaderElectionEngine balancing = LeaderElectionEngine.builder(unlisted)
				.candidateId("b")
				.timing(TIMING)
				.scheduler(this.time)
				.balance(1, Map.of())
				.build();
			try {
				balancing.start();
			}
			finally {
				balancing.close();
			}
		}).withMessageContaining("Balancing needs a store that lists live candidates");
		engine.close();
	}

	/**
	 * The store as seen by a candidate that announces itself but never leads: every
	 * acquisition finds the lease taken.
	 */
	private LeaseStore neverLeads() {
		return new ForwardingLeaseStore(this.store) {

			@Override
			public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration,
					Duration timeout) {
				return Optional.empty();
			}

			@Override
			public Map<String, Lease> tryAcquireAll(Collection<String> groups, String candidateId,
					Duration leaseDuration, Duration timeout) {
				return Map.of();
			}

		};
	}

	private LeaderElectionEngine start(String id, LeaseStore store, int weight, Map<String, String> preferred) {
		LeaderElectionEngine engine = LeaderElectionEngine.builder(store)
			.candidateId(id)
			.timing(TIMING)
			.scheduler(this.time)
			.balance(weight, preferred)
			.listener(new LeaderElectionListener() {

				@Override
				public void granted(Leadership leadership) {
					BalancingTests.this.grants.incrementAndGet();
				}

				@Override
				public void revoked(Leadership leadership, RevocationReason reason) {
					if (reason == RevocationReason.REBALANCED) {
						BalancingTests.this.handOvers.incrementAndGet();
					}
				}

			})
			.build();
		this.engines.track(engine);
		this.started.add(engine);
		List<LeaderElection> elections = new ArrayList<>();
		for (int i = 0; i < GROUPS; i++) {
			elections.add(engine.join("group-" + i));
		}
		engine.start();
		this.candidates.put(id, elections);
		return engine;
	}

	/**
	 * Waits, in real time, for the events published so far to reach the listeners: they
	 * are delivered on the engines' own threads.
	 */
	private void awaitEvents() {
		for (LeaderElectionEngine engine : this.started) {
			assertThat(engine.notifier().awaitDelivered(Duration.ofSeconds(15))).as("events delivered").isTrue();
		}
	}

	private void closeEngineOf(String id) {
		this.engines.closeEngineOf(id);
		this.candidates.remove(id);
	}

	private int led(String id) {
		return (int) this.candidates.get(id).stream().filter(LeaderElection::isLeader).count();
	}

	private int ledBy(List<String> ids) {
		return ids.stream().mapToInt(this::led).sum();
	}

	private int leaders() {
		return ledBy(List.copyOf(this.candidates.keySet()));
	}

	private int spread() {
		return spread(List.copyOf(this.candidates.keySet()));
	}

	private int spread(List<String> ids) {
		int max = ids.stream().mapToInt(this::led).max().orElse(0);
		int min = ids.stream().mapToInt(this::led).min().orElse(0);
		return max - min;
	}

	private void advance(Duration duration) {
		advance(duration, STEP);
	}

	private void advance(Duration duration, Duration step) {
		long end = this.time.nanoTime() + duration.toNanos();
		while (this.time.nanoTime() < end) {
			step(Duration.ofNanos(Math.min(step.toNanos(), end - this.time.nanoTime())));
		}
	}

	private void advanceUntil(BooleanSupplier condition) {
		try {
			this.time.advanceUntil(() -> {
				checkOneLeaderPerGroup();
				return condition.getAsBoolean();
			}, STEP, WAIT);
		}
		catch (AssertionError ex) {
			throw new AssertionError(ex.getMessage() + "; leaders by candidate " + leadersByCandidate(), ex);
		}
	}

	private Map<String, Integer> leadersByCandidate() {
		Map<String, Integer> leaders = new HashMap<>();
		this.candidates.keySet().forEach((id) -> leaders.put(id, led(id)));
		return leaders;
	}

	/** Moves time on, and checks that no group has two leaders at once. */
	private void step(Duration duration) {
		this.time.advance(duration);
		checkOneLeaderPerGroup();
	}

	/**
	 * Runs after every step, so in plain loops, and builds an assertion only for a group
	 * led twice: the steps of the longest tests number in the tens of thousands.
	 */
	private void checkOneLeaderPerGroup() {
		Collection<List<LeaderElection>> all = this.candidates.values();
		for (int group = 0; group < GROUPS; group++) {
			int leading = 0;
			for (List<LeaderElection> elections : all) {
				if (elections.get(group).isLeader()) {
					leading++;
				}
			}
			if (leading > 1) {
				assertThat(leading).as("leaders of group-%d at once", group).isLessThanOrEqualTo(1);
			}
		}
	}

}
