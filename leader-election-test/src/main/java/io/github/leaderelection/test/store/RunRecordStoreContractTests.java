package io.github.leaderelection.test.store;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.spi.RunRecordStore;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The rules every {@link RunRecordStore} keeps, checked against a real store: a backend
 * whose store keeps run records subclasses this and only says how to reach its store.
 * Every test uses groups of its own, so that subclasses may share one server.
 */
public abstract class RunRecordStoreContractTests {

	// The protected tests let a lease end after a time; a store whose leases end
	// otherwise (a ZooKeeper session) overrides them with its equivalent, under the same
	// name.

	/** Long enough to stay live through any step of a test on a slow machine. */
	protected static final Duration LIVE = Duration.ofSeconds(30);

	/** Short enough to wait out. */
	protected static final Duration SHORT = Duration.ofMillis(400);

	/** The timeout given to every store call. */
	protected static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final Instant STARTED = Instant.parse("2026-11-28T02:00:00.010Z");

	protected static final long TICK = STARTED.toEpochMilli() - 10;

	private LeaseStore store;

	private RunRecordStore runs;

	/**
	 * Returns a store to test, which keeps run records. Every call within one test must
	 * reach the same storage: tests use several stores as candidates on several nodes
	 * would.
	 */
	protected abstract LeaseStore createStore();

	@BeforeEach
	void createStoreUnderTest() {
		this.store = createStore();
		assertThat(this.store).as("the store under test").isInstanceOf(RunRecordStore.class);
		this.runs = (RunRecordStore) this.store;
	}

	@Test
	void readsNothingForAJobThatNeverRan() {
		String group = newGroup();
		acquire(this.store, group, "a", LIVE);
		assertThat(this.runs.lastRun(group, "report", TIMEOUT)).isEmpty();
	}

	@Test
	void claimsARunUnderTheLeaseTheGroupsRecordHas() {
		String group = newGroup();
		Lease lease = acquire(this.store, group, "a", LIVE);
		RunRecord run = run(lease, "report", TICK);
		assertThat(this.runs.claimRun(lease, run, Duration.ZERO, TIMEOUT)).isTrue();
		assertThat(this.runs.lastRun(group, "report", TIMEOUT)).contains(run);
	}

	@Test
	void claimsEachTickOnceAndOnlyTicksLaterThanTheLast() {
		String group = newGroup();
		Lease lease = acquire(this.store, group, "a", LIVE);
		assertThat(this.runs.claimRun(lease, run(lease, "report", TICK), Duration.ZERO, TIMEOUT)).isTrue();
		assertThat(this.runs.claimRun(lease, run(lease, "report", TICK), Duration.ZERO, TIMEOUT)).as("same tick")
			.isFalse();
		assertThat(this.runs.claimRun(lease, run(lease, "report", TICK - 60_000), Duration.ZERO, TIMEOUT))
			.as("earlier tick")
			.isFalse();
		RunRecord next = run(lease, "report", TICK + 60_000);
		assertThat(this.runs.claimRun(lease, next, Duration.ZERO, TIMEOUT)).as("later tick").isTrue();
		assertThat(this.runs.lastRun(group, "report", TIMEOUT)).contains(next);
	}

	@Test
	void claimsATickOnlyAtLeastTheMinimumIntervalAfterTheLast() {
		String group = newGroup();
		Lease lease = acquire(this.store, group, "a", LIVE);
		Duration period = Duration.ofSeconds(10);
		assertThat(this.runs.claimRun(lease, run(lease, "sweep", TICK), period, TIMEOUT)).isTrue();
		assertThat(this.runs.claimRun(lease, run(lease, "sweep", TICK + 9_999), period, TIMEOUT)).isFalse();
		assertThat(this.runs.claimRun(lease, run(lease, "sweep", TICK + 10_000), period, TIMEOUT)).isTrue();
	}

	@Test
	protected void refusesAClaimUnderALeaseTheGroupsRecordNoLongerHas() {
		String group = newGroup();
		Lease first = acquire(this.store, group, "a", SHORT);
		awaitExpired(group);
		LeaseStore other = createStore();
		Lease next = acquire(other, group, "b", LIVE);
		assertThat(this.runs.claimRun(first, run(first, "report", TICK), Duration.ZERO, TIMEOUT))
			.as("a claim under the lease taken over")
			.isFalse();
		assertThat(((RunRecordStore) other).claimRun(next, run(next, "report", TICK), Duration.ZERO, TIMEOUT)).isTrue();
		assertThat(this.runs.lastRun(group, "report", TIMEOUT).orElseThrow().holder()).isEqualTo("b");
	}

	@Test
	void refusesAClaimUnderAReleasedLease() {
		String group = newGroup();
		Lease lease = acquire(this.store, group, "a", LIVE);
		this.store.release(lease, TIMEOUT);
		assertThat(this.runs.claimRun(lease, run(lease, "report", TICK), Duration.ZERO, TIMEOUT)).isFalse();
		assertThat(this.runs.lastRun(group, "report", TIMEOUT)).isEmpty();
	}

	@Test
	protected void refusesAClaimUnderAnExpiredLease() {
		String group = newGroup();
		Lease lease = acquire(this.store, group, "a", SHORT);
		awaitExpired(group);
		assertThat(this.runs.claimRun(lease, run(lease, "report", TICK), Duration.ZERO, TIMEOUT)).isFalse();
	}

	@Test
	void aRunsEndIsWrittenOnlyWhileItIsTheLastRun() {
		String group = newGroup();
		Lease lease = acquire(this.store, group, "a", LIVE);
		RunRecord first = run(lease, "report", TICK);
		assertThat(this.runs.claimRun(lease, first, Duration.ZERO, TIMEOUT)).isTrue();
		RunRecord ended = first.endedAs(RunOutcome.SUCCEEDED, STARTED.plusSeconds(3));
		assertThat(this.runs.finishRun(ended, TIMEOUT)).isTrue();
		assertThat(this.runs.lastRun(group, "report", TIMEOUT)).contains(ended);
		RunRecord second = run(lease, "report", TICK + 60_000);
		assertThat(this.runs.claimRun(lease, second, Duration.ZERO, TIMEOUT)).isTrue();
		assertThat(this.runs.finishRun(first.endedAs(RunOutcome.FAILED, STARTED.plusSeconds(4)), TIMEOUT))
			.as("the end of a run a later one replaced")
			.isFalse();
		assertThat(this.runs.lastRun(group, "report", TIMEOUT)).contains(second);
	}

	@Test
	void aLeaderThatLostItsLeaseStillWritesTheEndOfItsRun() {
		String group = newGroup();
		Lease lease = acquire(this.store, group, "a", LIVE);
		RunRecord run = run(lease, "report", TICK);
		assertThat(this.runs.claimRun(lease, run, Duration.ZERO, TIMEOUT)).isTrue();
		this.store.release(lease, TIMEOUT);
		RunRecord ended = run.endedAs(RunOutcome.CANCELLED, STARTED.plusSeconds(1));
		assertThat(this.runs.finishRun(ended, TIMEOUT)).isTrue();
		assertThat(this.runs.lastRun(group, "report", TIMEOUT)).contains(ended);
	}

	@Test
	void keepsTheRunsOfJobsAndGroupsApart() {
		String group = newGroup();
		String otherGroup = newGroup();
		Lease lease = acquire(this.store, group, "a", LIVE);
		Lease otherLease = acquire(this.store, otherGroup, "a", LIVE);
		assertThat(this.runs.claimRun(lease, run(lease, "report", TICK), Duration.ZERO, TIMEOUT)).isTrue();
		assertThat(this.runs.claimRun(lease, run(lease, "sweep", TICK), Duration.ZERO, TIMEOUT)).isTrue();
		assertThat(this.runs.claimRun(otherLease, run(otherLease, "report", TICK), Duration.ZERO, TIMEOUT)).isTrue();
		assertThat(this.runs.lastRun(group, "report", TIMEOUT).orElseThrow().job()).isEqualTo("report");
		assertThat(this.runs.lastRun(otherGroup, "report", TIMEOUT).orElseThrow().group()).isEqualTo(otherGroup);
	}

	@Test
	void listsEveryJobsLastRunOfTheGroupInJobOrder() {
		String group = newGroup();
		// A group whose name starts with the other's: a store that lists by a key or path
		// prefix must not take its runs for the other group's.
		String longer = group + "-eu";
		Lease lease = acquire(this.store, group, "a", LIVE);
		Lease longerLease = acquire(this.store, longer, "a", LIVE);
		RunRecord sweep = run(lease, "sweep", TICK);
		RunRecord report = run(lease, "report", TICK);
		assertThat(this.runs.claimRun(lease, sweep, Duration.ZERO, TIMEOUT)).isTrue();
		assertThat(this.runs.claimRun(lease, report, Duration.ZERO, TIMEOUT)).isTrue();
		assertThat(this.runs.claimRun(longerLease, run(longerLease, "audit", TICK), Duration.ZERO, TIMEOUT)).isTrue();
		RunRecord ended = report.endedAs(RunOutcome.FAILED, STARTED.plusSeconds(2));
		assertThat(this.runs.finishRun(ended, TIMEOUT)).isTrue();
		RunRecord next = run(lease, "sweep", TICK + 60_000);
		assertThat(this.runs.claimRun(lease, next, Duration.ZERO, TIMEOUT)).isTrue();
		assertThat(this.runs.runs(group, TIMEOUT)).containsExactly(ended, next);
		assertThat(this.runs.runs(longer, TIMEOUT)).extracting(RunRecord::job).containsExactly("audit");
	}

	@Test
	void listsNothingForAGroupWithoutRuns() {
		String group = newGroup();
		assertThat(this.runs.runs(group, TIMEOUT)).as("a group never led").isEmpty();
		acquire(this.store, group, "a", LIVE);
		assertThat(this.runs.runs(group, TIMEOUT)).as("a group led, whose jobs never ran").isEmpty();
	}

	@Test
	void aTickClaimedAtOnceByManyCallersIsClaimedOnce() throws Exception {
		String group = newGroup();
		Lease lease = acquire(this.store, group, "a", LIVE);
		int callers = 8;
		ExecutorService executor = Executors.newFixedThreadPool(callers);
		try {
			CountDownLatch ready = new CountDownLatch(callers);
			List<Future<Boolean>> claims = new ArrayList<>();
			for (int i = 0; i < callers; i++) {
				claims.add(executor.submit(() -> {
					ready.countDown();
					ready.await();
					return this.runs.claimRun(lease, run(lease, "report", TICK), Duration.ZERO, TIMEOUT);
				}));
			}
			int claimed = 0;
			for (Future<Boolean> claim : claims) {
				claimed += claim.get(30, TimeUnit.SECONDS) ? 1 : 0;
			}
			assertThat(claimed).isOne();
		}
		finally {
			executor.shutdownNow();
		}
	}

	protected static RunRecord run(Lease lease, String job, long tick) {
		return new RunRecord(lease.group(), job, tick, lease.holder(), lease.term(), STARTED, null, RunOutcome.RUNNING);
	}

	protected static Lease acquire(LeaseStore store, String group, String candidateId, Duration leaseDuration) {
		Optional<Lease> lease = store.tryAcquire(group, candidateId, leaseDuration, TIMEOUT);
		assertThat(lease).as("lease of %s for %s", group, candidateId).isPresent();
		return lease.get();
	}

	private void awaitExpired(String group) {
		await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(50))
			.until(() -> this.store.read(group, TIMEOUT).orElseThrow().isExpired());
	}

	protected static String newGroup() {
		return "group-" + UUID.randomUUID();
	}

}
