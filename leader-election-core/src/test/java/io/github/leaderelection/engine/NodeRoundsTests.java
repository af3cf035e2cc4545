package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.BatchCutShortException;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.github.leaderelection.engine.TestEngines.TIMING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A node's regular store requests for many groups, on virtual time: one renewal of every
 * lease it leads and one read of every group it follows per retry period, each group
 * still judged on its own.
 */
class NodeRoundsTests {

	private static final int GROUPS = 500;

	private static final Duration STEP = Duration.ofMillis(10);

	private static final Duration WAIT = Duration.ofSeconds(60);

	private final VirtualElectionScheduler time = new VirtualElectionScheduler();

	private final InMemoryLeaseStore store = new InMemoryLeaseStore(this.time::nanoTime);

	private final TestEngines engines = new TestEngines(this.time);

	@AfterEach
	void closeEngines() {
		this.engines.close();
	}

	@Test
	void aNodeRenewsEveryLeaseItLeadsAndReadsEveryGroupItFollowsInOneRequestEachPerPeriod() {
		CountingStore aStore = new CountingStore(this.store);
		CountingStore bStore = new CountingStore(this.store);
		List<LeaderElection> a = join(this.engines.engine("a", aStore));
		advanceUntil(() -> a.stream().allMatch(LeaderElection::isLeader));
		List<LeaderElection> b = join(this.engines.engine("b", bStore));
		advanceUntil(() -> b.stream().allMatch((election) -> election.currentLeader().isPresent()));
		List<Long> terms = a.stream().map((election) -> election.leadership().orElseThrow().term()).toList();
		aStore.calls.clear();
		bStore.calls.clear();

		int periods = 20;
		advance(TIMING.retryPeriod().multipliedBy(periods));

		assertThat(aStore.count("renewAll")).as("renewal rounds of the leader").isBetween(periods - 1, periods + 1);
		assertThat(bStore.count("readAll")).as("read rounds of the follower").isBetween(periods - 1, periods + 1);
		assertThat(aStore.calls).as("calls of the leader").containsOnlyKeys("renewAll");
		assertThat(bStore.calls).as("calls of the follower").containsOnlyKeys("readAll");
		assertThat(aStore.largestBatch).hasValue(GROUPS);
		assertThat(bStore.largestBatch).hasValue(GROUPS);
		assertThat(a).allMatch(LeaderElection::isLeader);
		assertThat(b).noneMatch(LeaderElection::isLeader);
		assertThat(a.stream().map((election) -> election.leadership().orElseThrow().term()).toList())
			.as("terms after the rounds")
			.isEqualTo(terms);
	}

	/**
	 * A node starting with many groups looks at them and takes them in a few requests,
	 * not one read and one acquisition per group, and so leads every group within the
	 * first retry periods; a second node starting meanwhile takes what the first has not
	 * taken, never a group twice.
	 */
	@Test
	void nodesStartingWithManyGroupsReadAndTakeThemInAFewRequests() {
		CountingStore aStore = new CountingStore(this.store);
		CountingStore bStore = new CountingStore(this.store);
		long start = this.time.nanoTime();
		List<LeaderElection> a = join(this.engines.engine("a", aStore));
		List<LeaderElection> b = join(this.engines.engine("b", bStore));
		advanceUntil(() -> {
			for (int i = 0; i < GROUPS; i++) {
				if (a.get(i).isLeader() == b.get(i).isLeader()) {
					return false; // nobody leads it yet (both leading is checked below)
				}
			}
			return true;
		});
		Duration elapsed = Duration.ofNanos(this.time.nanoTime() - start);

		assertThat(elapsed).as("every group led after").isLessThanOrEqualTo(TIMING.retryPeriod().multipliedBy(2));
		for (CountingStore store : List.of(aStore, bStore)) {
			assertThat(store.calls).as("calls while starting").doesNotContainKey("read");
			assertThat(store.count("readAll")).as("reads while starting").isLessThanOrEqualTo(4);
			// (A batch of one group is sent as a tryAcquire.)
			assertThat(store.count("tryAcquireAll") + store.count("tryAcquire")).as("acquisitions while starting")
				.isLessThanOrEqualTo(4);
		}
		assertThat(aStore.largestBatch.get() + bStore.largestBatch.get()).as("largest batches")
			.isGreaterThanOrEqualTo(GROUPS);
		for (int i = 0; i < GROUPS; i++) {
			assertThat(a.get(i).isLeader() && b.get(i).isLeader()).as(a.get(i).group()).isFalse();
		}
	}

	@Test
	void aRenewalRefusedForOneGroupEndsOnlyThatGroupsLeadership() {
		Map<String, RevocationReason> revoked = new ConcurrentHashMap<>();
		LeaderElectionEngine engine = this.engines.engine("a", this.store, new LeaderElectionListener() {

			@Override
			public void revoked(Leadership leadership, RevocationReason reason) {
				revoked.put(leadership.group(), reason);
			}

		});
		List<LeaderElection> a = join(engine);
		advanceUntil(() -> a.stream().allMatch(LeaderElection::isLeader));
		List<Long> terms = a.stream().map((election) -> election.leadership().orElseThrow().term()).toList();
		LeaderElection forced = a.get(7);

		this.store.forceLeader(forced.group(), "b", TIMING.retryPeriod());
		advance(TIMING.retryPeriod().multipliedBy(3));

		assertThat(forced.isLeader()).isFalse();
		await().atMost(Duration.ofSeconds(15)).until(() -> revoked.containsKey(forced.group()));
		assertThat(revoked).containsExactly(Map.entry(forced.group(), RevocationReason.FORCED_ELSEWHERE));
		for (int i = 0; i < GROUPS; i++) {
			if (i != 7) {
				assertThat(a.get(i).leadership().map(Leadership::term)).as(a.get(i).group())
					.isEqualTo(Optional.of(terms.get(i)));
			}
		}
	}

	@Test
	void aFollowerTakesEachReleasedGroupWithinARetryPeriodOfSeeingIt() {
		List<LeaderElection> a = join(this.engines.engine("a", new CountingStore(this.store)));
		advanceUntil(() -> a.stream().allMatch(LeaderElection::isLeader));
		List<LeaderElection> b = join(this.engines.engine("b", new CountingStore(this.store)));
		advanceUntil(() -> b.stream().allMatch((election) -> election.currentLeader().isPresent()));

		for (int i = 0; i < 10; i++) {
			a.get(i).yieldLeadership();
		}
		// Yielded leases are released at once; b's next read round sees them free. The
		// one who yielded stays out for two retry periods.
		advance(TIMING.retryPeriod().multipliedBy(2));

		for (int i = 0; i < GROUPS; i++) {
			assertThat(b.get(i).isLeader()).as(b.get(i).group()).isEqualTo(i < 10);
			assertThat(a.get(i).isLeader()).as(a.get(i).group()).isEqualTo(i >= 10);
		}
	}

	/**
	 * A batch acquisition cut short by its timeout (as the SPI's default one-by-one
	 * acquisition is on a slow store) leaves groups untried; the round due meanwhile was
	 * skipped, as a round still on its way skips the next. The untried groups must look
	 * again at once, not a round later.
	 */
	@Test
	void groupsThatABatchCutShortByItsTimeoutLeftUntriedLookAgainAtOnce() {
		int perBatch = 25;
		LeaseStore slowBatches = new ForwardingLeaseStore(this.store) {

			@Override
			public Map<String, Lease> tryAcquireAll(Collection<String> groups, String candidateId,
					Duration leaseDuration, Duration timeout) {
				Map<String, Lease> taken = new LinkedHashMap<>();
				List<String> tried = groups.stream().limit(perBatch).toList();
				for (String group : tried) {
					tryAcquire(group, candidateId, leaseDuration, timeout)
						.ifPresent((lease) -> taken.put(group, lease));
				}
				// The time is up: the rest are left untried, and whatever fell due
				// meanwhile runs now (a round due meanwhile finds this one on its way).
				NodeRoundsTests.this.time.advance(timeout);
				if (tried.size() == groups.size()) {
					return taken;
				}
				throw new BatchCutShortException(new HashSet<>(tried), taken,
						new TimeoutException("The batch's time is up"));
			}

		};
		List<LeaderElection> a = join(this.engines.engine("a", this.store));
		advanceUntil(() -> a.stream().allMatch(LeaderElection::isLeader));
		List<LeaderElection> b = join(this.engines.engine("b", slowBatches));
		advanceUntil(() -> b.stream().allMatch((election) -> election.currentLeader().isPresent()));

		this.engines.closeEngineOf("a");
		long released = this.time.nanoTime();
		advanceUntil(() -> b.stream().allMatch(LeaderElection::isLeader));

		// Batches back to back, after the read that found the groups free (within a
		// retry period); a round apart, they would take twice as long.
		int batches = GROUPS / perBatch;
		assertThat(Duration.ofNanos(this.time.nanoTime() - released)).as("time to take the released groups")
			.isLessThanOrEqualTo(TIMING.retryPeriod().multipliedBy(batches + 2));
	}

	private List<LeaderElection> join(LeaderElectionEngine engine) {
		List<LeaderElection> elections = new ArrayList<>();
		for (int i = 0; i < GROUPS; i++) {
			elections.add(engine.join("group-" + i));
		}
		engine.start();
		return elections;
	}

	private void advance(Duration duration) {
		long end = this.time.nanoTime() + duration.toNanos();
		while (this.time.nanoTime() < end) {
			this.time.advance(Duration.ofNanos(Math.min(STEP.toNanos(), end - this.time.nanoTime())));
		}
	}

	private void advanceUntil(BooleanSupplier condition) {
		this.time.advanceUntil(condition, STEP, WAIT);
	}

	/** Counts a candidate's store calls by operation, and the largest batch. */
	private static final class CountingStore extends ForwardingLeaseStore {

		final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

		final AtomicInteger largestBatch = new AtomicInteger();

		CountingStore(LeaseStore delegate) {
			super(delegate);
		}

		int count(String operation) {
			AtomicInteger count = this.calls.get(operation);
			return (count != null) ? count.get() : 0;
		}

		private void counted(String operation, int batch) {
			this.calls.computeIfAbsent(operation, (key) -> new AtomicInteger()).incrementAndGet();
			this.largestBatch.accumulateAndGet(batch, Math::max);
		}

		@Override
		public Optional<Lease> read(String group, Duration timeout) {
			counted("read", 1);
			return super.read(group, timeout);
		}

		@Override
		public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
			counted("tryAcquire", 1);
			return super.tryAcquire(group, candidateId, leaseDuration, timeout);
		}

		@Override
		public Optional<Lease> renew(Lease lease, Duration leaseDuration, Duration timeout) {
			counted("renew", 1);
			return super.renew(lease, leaseDuration, timeout);
		}

		@Override
		public Map<String, Lease> tryAcquireAll(Collection<String> groups, String candidateId, Duration leaseDuration,
				Duration timeout) {
			counted("tryAcquireAll", groups.size());
			return super.tryAcquireAll(groups, candidateId, leaseDuration, timeout);
		}

		@Override
		public Map<String, Lease> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout) {
			counted("renewAll", leases.size());
			return super.renewAll(leases, leaseDuration, timeout);
		}

		@Override
		public Map<String, Lease> readAll(Collection<String> groups, Duration timeout) {
			counted("readAll", groups.size());
			return super.readAll(groups, timeout);
		}

	}

}
