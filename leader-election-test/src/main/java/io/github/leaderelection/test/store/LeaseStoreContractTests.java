package io.github.leaderelection.test.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.engine.ElectionStatus;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.spi.AdminLeaseStore;
import io.github.leaderelection.spi.BatchLeaseStore;
import io.github.leaderelection.spi.CandidateListStore;
import io.github.leaderelection.spi.ChangeFeedStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The rules every {@link LeaseStore} keeps, checked against a real store: a backend's
 * test subclasses this and only says how to reach its store.
 *
 * <p>
 * Every test uses groups of its own, so that subclasses may share one server. Nothing
 * compares the store's clock with this JVM's: waits for expiry poll the store with
 * generous bounds.
 */
public abstract class LeaseStoreContractTests {

	// The protected tests assume a lease that ends after a time and a forced leader that
	// need not take part yet; a store whose leases end otherwise (a ZooKeeper session)
	// overrides them with its equivalent, under the same name.

	/** Long enough to stay live through any step of a test on a slow machine. */
	protected static final Duration LIVE = Duration.ofSeconds(30);

	/**
	 * The lease duration of renewals that must succeed: unlike {@link #LIVE} again, it
	 * moves the lease end even within the millisecond of the grant, so that a store may
	 * count changed rows.
	 */
	protected static final Duration RENEWED = LIVE.plusSeconds(1);

	/** Short enough to wait out. */
	protected static final Duration SHORT = Duration.ofMillis(400);

	/** The timeout given to every store call. */
	protected static final Duration TIMEOUT = Duration.ofSeconds(5);

	private static final Duration EXPIRY_WAIT = Duration.ofSeconds(10);

	/**
	 * Groups in one batch: more than a store's natural chunk (etcd's 128 operations per
	 * transaction, a few hundred bind parameters), so that chunking is exercised.
	 */
	private static final int MANY = 300;

	/**
	 * The timeout of a call of {@link #MANY} groups: what a batch returns is the
	 * contract, not how fast (a store that takes the groups one after another, as the
	 * ZooKeeper store does, needs about 5 s for them on a busy machine; the benchmarks
	 * measure speed).
	 */
	private static final Duration MANY_TIMEOUT = Duration.ofSeconds(60);

	private LeaseStore store;

	/**
	 * Returns a store to test. Every call within one test must reach the same storage:
	 * tests use several stores as candidates on several nodes would.
	 */
	protected abstract LeaseStore createStore();

	/**
	 * Returns a store whose configurable identifier (a table name, a key prefix, a base
	 * path) is the given value; unsafe values must be refused with an
	 * {@link IllegalArgumentException} whose message quotes the value and says "must
	 * match" followed by the allowed pattern.
	 */
	protected abstract LeaseStore createStoreWithIdentifier(String unsafeIdentifier);

	@BeforeEach
	void createStoreUnderTest() {
		this.store = createStore();
	}

	@Test
	void readsNothingForUnknownGroup() {
		assertThat(this.store.read(newGroup(), TIMEOUT)).isEmpty();
	}

	@Test
	void acquiresEmptyGroupAtOnce() {
		String group = newGroup();
		Lease lease = acquire(this.store, group, "a", LIVE).orElseThrow();
		assertThat(lease.group()).isEqualTo(group);
		assertThat(lease.holder()).isEqualTo("a");
		assertThat(lease.term()).isPositive();
		assertThat(lease.activeIn()).isZero();
		assertThat(lease.expiresIn()).isPositive().isLessThanOrEqualTo(LIVE);
		Lease read = read(group);
		assertThat(read.holder()).isEqualTo("a");
		assertThat(read.term()).isEqualTo(lease.term());
		assertThat(read.hasLiveHolder()).isTrue();
	}

	@Test
	void refusesSecondCandidateWhileLeaseIsLive() {
		String group = newGroup();
		Lease lease = acquire(this.store, group, "a", LIVE).orElseThrow();
		assertThat(acquire(createStore(), group, "b", LIVE)).isEmpty();
		assertThat(read(group).holder()).isEqualTo("a");
		assertThat(read(group).term()).isEqualTo(lease.term());
	}

	@Test
	protected void takesOverExpiredLeaseWithGreaterTermAndNoWait() throws Exception {
		String group = newGroup();
		Lease old = acquire(this.store, group, "a", SHORT).orElseThrow();
		awaitExpiry(group);
		assertThat(read(group).expiresIn()).isLessThanOrEqualTo(Duration.ZERO);
		Lease lease = acquire(createStore(), group, "b", LIVE).orElseThrow();
		assertThat(lease.holder()).isEqualTo("b");
		assertThat(lease.term()).isGreaterThan(old.term());
		assertThat(lease.activeIn()).isZero();
		assertThat(this.store.renew(old, LIVE, TIMEOUT)).isEmpty();
		assertThat(read(group).holder()).isEqualTo("b");
	}

	@Test
	void reacquiringOwnLeaseGivesGreaterTermAndStalesTheOldOne() {
		String group = newGroup();
		Lease first = acquire(this.store, group, "a", LIVE).orElseThrow();
		Lease second = acquire(this.store, group, "a", LIVE).orElseThrow();
		assertThat(second.holder()).isEqualTo("a");
		assertThat(second.term()).isGreaterThan(first.term());
		assertThat(this.store.renew(first, LIVE, TIMEOUT)).isEmpty();
		assertThat(this.store.renew(second, RENEWED, TIMEOUT)).isPresent();
	}

	@Test
	void renewsOnlyForHolderAndTerm() {
		String group = newGroup();
		Lease lease = acquire(this.store, group, "a", SHORT).orElseThrow();
		assertThat(this.store.renew(withHolder(lease, "b"), LIVE, TIMEOUT)).isEmpty();
		assertThat(this.store.renew(withTerm(lease, lease.term() - 1), LIVE, TIMEOUT)).isEmpty();
		assertThat(this.store.renew(withTerm(lease, lease.term() + 1), LIVE, TIMEOUT)).isEmpty();
		assertThat(this.store.renew(lease, RENEWED, TIMEOUT)).isPresent();
		Lease read = read(group);
		assertThat(read.expiresIn()).isGreaterThan(SHORT);
		assertThat(read.holder()).isEqualTo("a");
		assertThat(read.term()).isEqualTo(lease.term());
		assertThat(acquire(createStore(), group, "b", LIVE)).isEmpty();
	}

	/**
	 * A renewal hands out the lease to name next: the same group, holder and term, and a
	 * version that the next renewal and the release accept, whether or not the renewal
	 * wrote (a new lease duration is a write on some stores).
	 */
	@Test
	void renewsAndReleasesWithTheLeaseTheLastRenewalHandedOut() {
		String group = newGroup();
		Lease lease = acquire(this.store, group, "a", SHORT).orElseThrow();
		Lease renewed = this.store.renew(lease, LIVE, TIMEOUT).orElseThrow();
		assertThat(renewed.group()).isEqualTo(group);
		assertThat(renewed.holder()).isEqualTo("a");
		assertThat(renewed.term()).isEqualTo(lease.term());
		Lease again = this.store.renew(renewed, RENEWED, TIMEOUT).orElseThrow();
		assertThat(again.term()).isEqualTo(lease.term());
		Map<String, Lease> inBatch = batches().renewAll(List.of(again), LIVE, TIMEOUT);
		assertThat(inBatch).containsOnlyKeys(group);
		assertThat(inBatch.get(group).term()).isEqualTo(lease.term());
		this.store.release(inBatch.get(group), TIMEOUT);
		assertThat(read(group).holder()).isNull();
		assertThat(acquire(createStore(), group, "b", LIVE)).isPresent();
	}

	@Test
	void candidatesThatJoinAndLeaveKeepTheRules() {
		String group = newGroup();
		ChangeFeedStore other = as(ChangeFeedStore.class, createStore());
		feed().join(group, "a", TIMEOUT);
		other.join(group, "b", TIMEOUT);
		other.join(group, "b", TIMEOUT); // joining twice is joining once
		Lease lease = acquire(this.store, group, "a", LIVE).orElseThrow();
		assertThat(acquire(other, group, "b", LIVE)).isEmpty();
		// A read tells the truth to a candidate that joined: the holder's lease is live.
		Lease seen = other.read(group, TIMEOUT).orElseThrow();
		assertThat(seen.holder()).isEqualTo("a");
		assertThat(seen.hasLiveHolder()).isTrue();
		assertThat(seen.isAcquirableBy("b")).isFalse();
		// Leaving does not end a held lease; releasing does, and the one still in takes
		// it.
		feed().leave(group, "a", TIMEOUT);
		assertThat(this.store.renew(lease, RENEWED, TIMEOUT)).isPresent();
		assertThat(read(group).holder()).isEqualTo("a");
		this.store.release(lease, TIMEOUT);
		Lease next = acquire(other, group, "b", LIVE).orElseThrow();
		assertThat(next.term()).isGreaterThan(lease.term());
		other.leave(group, "b", TIMEOUT);
		other.release(next, TIMEOUT);
		feed().join(group, "a", TIMEOUT); // joining again after leaving
		assertThat(acquire(this.store, group, "a", LIVE)).isPresent();
	}

	@Test
	void acquiresSeveralGroupsInOneCallEachOnlyWhenItIsFree() {
		String unknown = newGroup();
		String released = newGroup();
		String heldByOther = newGroup();
		String own = newGroup();
		Lease releasedLease = acquire(this.store, released, "b", LIVE).orElseThrow();
		this.store.release(releasedLease, TIMEOUT);
		Lease otherLease = acquire(this.store, heldByOther, "b", LIVE).orElseThrow();
		// Through the store that holds its own lease: on a store that queues candidates
		// (ZooKeeper) another client with the same id is another process.
		Lease ownLease = acquire(this.store, own, "a", LIVE).orElseThrow();
		BatchLeaseStore candidate = batches();
		Map<String, Lease> taken = candidate.tryAcquireAll(List.of(unknown, released, heldByOther, own), "a", LIVE,
				TIMEOUT);
		assertThat(taken).containsOnlyKeys(unknown, released, own);
		taken.forEach((group, lease) -> {
			assertThat(lease.group()).isEqualTo(group);
			assertThat(lease.holder()).isEqualTo("a");
			// Its own live lease, taken again, is waited out as one held by another
			// process with the same candidate id would be.
			assertThat(lease.activeIn()).isLessThanOrEqualTo(group.equals(own) ? LIVE : Duration.ZERO);
			assertThat(lease.expiresIn()).isPositive().isLessThanOrEqualTo(LIVE);
			assertThat(read(group).holder()).isEqualTo("a");
			assertThat(read(group).term()).isEqualTo(lease.term());
		});
		assertThat(taken.get(unknown).term()).isPositive();
		assertThat(taken.get(released).term()).isGreaterThan(releasedLease.term());
		assertThat(taken.get(own).term()).isGreaterThan(ownLease.term());
		assertThat(this.store.renew(ownLease, RENEWED, TIMEOUT)).isEmpty();
		assertThat(read(heldByOther).holder()).isEqualTo("b");
		assertThat(read(heldByOther).term()).isEqualTo(otherLease.term());
		assertThat(this.store.renew(otherLease, RENEWED, TIMEOUT)).isPresent();
		assertThat(candidate.renewAll(taken.values(), RENEWED, TIMEOUT).keySet())
			.containsExactlyInAnyOrderElementsOf(taken.keySet());
		assertThat(candidate.tryAcquireAll(List.of(), "a", LIVE, TIMEOUT)).isEmpty();
	}

	/**
	 * A batch takes over an expired lease with no wait, and a lease forced to the
	 * candidate only once the current one ends, as {@link LeaseStore#tryAcquire} does. A
	 * store whose leases end otherwise (a ZooKeeper session) overrides this.
	 */
	@Test
	protected void acquiresExpiredAndForcedLeasesInOneCallAsOneByOne() throws Exception {
		String expired = newGroup();
		String forced = newGroup();
		Lease expiredLease = acquire(this.store, expired, "b", SHORT).orElseThrow();
		Lease forcedFrom = acquire(this.store, forced, "b", LIVE).orElseThrow();
		Duration remainder = read(forced).expiresIn();
		admin().forceLeader(forced, "a", TIMEOUT);
		long forcedTerm = read(forced).term();
		awaitExpiry(expired);
		Map<String, Lease> taken = as(BatchLeaseStore.class, createStore()).tryAcquireAll(List.of(expired, forced), "a",
				LIVE, TIMEOUT);
		assertThat(taken).containsOnlyKeys(expired, forced);
		assertThat(taken.get(expired).term()).isGreaterThan(expiredLease.term());
		assertThat(taken.get(expired).activeIn()).isZero();
		assertThat(taken.get(forced).term()).isGreaterThan(forcedTerm).isGreaterThan(forcedFrom.term());
		assertThat(taken.get(forced).activeIn()).isPositive().isLessThanOrEqualTo(remainder);
		assertThat(this.store.renew(expiredLease, LIVE, TIMEOUT)).isEmpty();
		assertThat(this.store.renew(forcedFrom, LIVE, TIMEOUT)).isEmpty();
	}

	@Test
	void acquiresManyGroupsInOneCall() {
		List<String> groups = new ArrayList<>();
		for (int i = 0; i < MANY; i++) {
			groups.add(newGroup());
		}
		Lease held = acquire(this.store, groups.get(MANY / 3), "b", LIVE).orElseThrow();
		Lease released = acquire(this.store, groups.get(2 * MANY / 3), "b", LIVE).orElseThrow();
		this.store.release(released, TIMEOUT);
		Map<String, Lease> taken = as(BatchLeaseStore.class, createStore()).tryAcquireAll(groups, "a", LIVE,
				MANY_TIMEOUT);
		List<String> free = new ArrayList<>(groups);
		free.remove(held.group());
		assertThat(taken).containsOnlyKeys(free);
		assertThat(taken.get(released.group()).term()).isGreaterThan(released.term());
		Map<String, Lease> read = batches().readAll(groups, TIMEOUT);
		for (String group : free) {
			assertThat(read.get(group).holder()).isEqualTo("a");
			assertThat(read.get(group).term()).isEqualTo(taken.get(group).term());
		}
		assertThat(read.get(held.group()).holder()).isEqualTo("b");
		assertThat(as(BatchLeaseStore.class, createStore()).tryAcquireAll(groups, "c", LIVE, TIMEOUT)).isEmpty();
	}

	@Test
	void electsExactlyOneOfRacingBatchesForEachGroup() throws Exception {
		List<String> groups = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			groups.add(newGroup());
		}
		ExecutorService executor = Executors.newFixedThreadPool(4);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<Map<String, Lease>>> batches = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				BatchLeaseStore candidateStore = as(BatchLeaseStore.class, createStore());
				String candidate = "candidate-" + i;
				List<String> shuffled = new ArrayList<>(groups);
				Collections.shuffle(shuffled);
				batches.add(executor.submit(() -> {
					start.await();
					return candidateStore.tryAcquireAll(shuffled, candidate, LIVE, TIMEOUT);
				}));
			}
			start.countDown();
			Map<String, Lease> winners = new HashMap<>();
			for (Future<Map<String, Lease>> batch : batches) {
				batch.get(60, TimeUnit.SECONDS).forEach((group, lease) -> {
					assertThat(winners.put(group, lease)).as("second winner of %s", group).isNull();
				});
			}
			assertThat(winners).containsOnlyKeys(groups);
			winners.forEach((group, lease) -> assertThat(read(group).holder()).isEqualTo(lease.holder()));
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void renewsSeveralLeasesInOneCallEachOnlyForItsHolderAndTerm() {
		String kept = newGroup();
		String released = newGroup();
		String stale = newGroup();
		Lease keptLease = acquire(this.store, kept, "a", SHORT).orElseThrow();
		Lease releasedLease = acquire(this.store, released, "a", SHORT).orElseThrow();
		Lease staleLease = acquire(this.store, stale, "a", SHORT).orElseThrow();
		this.store.release(releasedLease, TIMEOUT);
		assertThat(batches()
			.renewAll(List.of(releasedLease, keptLease, withTerm(staleLease, staleLease.term() + 1)), RENEWED, TIMEOUT)
			.keySet()).containsExactly(kept);
		assertThat(read(kept).expiresIn()).isGreaterThan(SHORT);
		assertThat(read(kept).term()).isEqualTo(keptLease.term());
		assertThat(read(released).hasLiveHolder()).isFalse();
		assertThat(batches().renewAll(List.of(), RENEWED, TIMEOUT).keySet()).isEmpty();
	}

	@Test
	void readsSeveralGroupsInOneCall() {
		String led = newGroup();
		String unknown = newGroup();
		Lease lease = acquire(this.store, led, "a", LIVE).orElseThrow();
		Map<String, Lease> leases = as(BatchLeaseStore.class, createStore()).readAll(List.of(led, unknown), TIMEOUT);
		assertThat(leases).containsOnlyKeys(led);
		assertThat(leases.get(led).holder()).isEqualTo("a");
		assertThat(leases.get(led).term()).isEqualTo(lease.term());
		assertThat(leases.get(led).hasLiveHolder()).isTrue();
	}

	@Test
	protected void renewsInOneCallOnlyLeasesThatNobodyForcedOrClearedOrTook() {
		String kept = newGroup();
		String forced = newGroup();
		String cleared = newGroup();
		String takenBack = newGroup();
		Lease keptLease = acquire(this.store, kept, "a", SHORT).orElseThrow();
		Lease forcedLease = acquire(this.store, forced, "a", LIVE).orElseThrow();
		Lease clearedLease = acquire(this.store, cleared, "a", LIVE).orElseThrow();
		Lease oldLease = acquire(this.store, takenBack, "a", LIVE).orElseThrow();
		AdminLeaseStore other = as(AdminLeaseStore.class, createStore());
		other.forceLeader(forced, "b", TIMEOUT);
		other.clear(cleared, TIMEOUT);
		Lease newLease = acquire(other, takenBack, "a", LIVE).orElseThrow(); // same
																				// holder,
																				// new
																				// term
		assertThat(batches()
			.renewAll(List.of(forcedLease, clearedLease, oldLease, keptLease,
					new Lease(newGroup(), "a", 1, LIVE, Duration.ZERO)), RENEWED, TIMEOUT)
			.keySet()).containsExactly(kept);
		assertThat(read(kept).expiresIn()).isGreaterThan(SHORT);
		assertThat(read(forced).holder()).isEqualTo("b");
		assertThat(read(cleared).holder()).isNull();
		assertThat(read(takenBack).term()).isEqualTo(newLease.term());
	}

	@Test
	void renewsAndReadsManyGroupsInOneCall() {
		List<String> groups = new ArrayList<>();
		List<Lease> leases = new ArrayList<>();
		for (int i = 0; i < MANY; i++) {
			String group = newGroup();
			groups.add(group);
			leases.add(acquire(this.store, group, "a", SHORT).orElseThrow());
		}
		Lease stale = leases.get(MANY / 2);
		this.store.release(stale, TIMEOUT);
		List<String> renewable = new ArrayList<>(groups);
		renewable.remove(stale.group());
		assertThat(batches().renewAll(leases, RENEWED, MANY_TIMEOUT).keySet())
			.containsExactlyInAnyOrderElementsOf(renewable);
		List<String> withUnknown = new ArrayList<>(groups);
		withUnknown.add(newGroup());
		Map<String, Lease> read = as(BatchLeaseStore.class, createStore()).readAll(withUnknown, MANY_TIMEOUT);
		assertThat(read).containsOnlyKeys(groups);
		for (Lease lease : leases) {
			Lease current = read.get(lease.group());
			assertThat(current.term()).isEqualTo(lease.term());
			if (lease == stale) {
				assertThat(current.hasLiveHolder()).isFalse();
			}
			else {
				assertThat(current.holder()).isEqualTo("a");
				assertThat(current.expiresIn()).isGreaterThan(SHORT);
			}
		}
		assertThat(batches().readAll(List.of(), TIMEOUT)).isEmpty();
	}

	/**
	 * The list of live candidates that balancing reads: an entry lasts its time by the
	 * store's clock, carries its weight, is refreshed by the next call and removed at
	 * once on request. A store that cannot list candidates overrides this test.
	 */
	@Test
	protected void listsLiveCandidatesWithTheirWeightsUntilTheirEntriesRunOut() {
		String a = newGroup();
		String b = newGroup();
		String brief = newGroup();
		assertThat(candidates().keepCandidateAlive(a, 1, LIVE, TIMEOUT)).containsEntry(a, 1);
		CandidateListStore other = as(CandidateListStore.class, createStore());
		other.keepCandidateAlive(brief, 1, SHORT, TIMEOUT);
		Map<String, Integer> live = other.keepCandidateAlive(b, 3, LIVE, TIMEOUT);
		assertThat(live).containsEntry(a, 1).containsEntry(b, 3);
		await().atMost(EXPIRY_WAIT)
			.untilAsserted(
					() -> assertThat(candidates().keepCandidateAlive(a, 2, LIVE, TIMEOUT)).doesNotContainKey(brief)
						.containsEntry(a, 2)
						.containsEntry(b, 3));
		other.removeCandidate(b, TIMEOUT);
		assertThat(candidates().keepCandidateAlive(a, 2, LIVE, TIMEOUT)).doesNotContainKey(b).containsKey(a);
		candidates().removeCandidate(a, TIMEOUT);
		candidates().removeCandidate(newGroup(), TIMEOUT); // unknown: nothing happens
		assertThat(other.keepCandidateAlive(b, 1, LIVE, TIMEOUT)).doesNotContainKey(a).containsEntry(b, 1);
		other.removeCandidate(b, TIMEOUT);
	}

	/**
	 * The engine announces a starting candidate with weight 0, then with its weight once
	 * its elections have joined their groups (see
	 * {@link io.github.leaderelection.spi.CandidateListStore#keepCandidateAlive}).
	 */
	@Test
	void listsAStartingCandidateWithWeightZeroThenWithItsWeight() {
		String starting = newGroup();
		String other = newGroup();
		CandidateListStore otherStore = as(CandidateListStore.class, createStore());
		assertThat(candidates().keepCandidateAlive(starting, 0, LIVE, TIMEOUT)).containsEntry(starting, 0);
		assertThat(otherStore.keepCandidateAlive(other, 1, LIVE, TIMEOUT)).containsEntry(starting, 0)
			.containsEntry(other, 1);
		assertThat(candidates().keepCandidateAlive(starting, 2, LIVE, TIMEOUT)).containsEntry(starting, 2);
		assertThat(otherStore.keepCandidateAlive(other, 1, LIVE, TIMEOUT)).containsEntry(starting, 2);
		candidates().removeCandidate(starting, TIMEOUT);
		otherStore.removeCandidate(other, TIMEOUT);
	}

	@Test
	protected void renewsExpiredLeaseThatNobodyTook() throws Exception {
		String group = newGroup();
		Lease lease = acquire(this.store, group, "a", SHORT).orElseThrow();
		awaitExpiry(group);
		assertThat(this.store.renew(lease, RENEWED, TIMEOUT)).isPresent();
		assertThat(read(group).hasLiveHolder()).isTrue();
		assertThat(acquire(createStore(), group, "b", LIVE)).isEmpty();
	}

	@Test
	void releasesOnlyForHolderAndTermThenLetsOthersInAtOnce() {
		String group = newGroup();
		Lease lease = acquire(this.store, group, "a", LIVE).orElseThrow();
		this.store.release(withHolder(lease, "b"), TIMEOUT);
		this.store.release(withTerm(lease, lease.term() - 1), TIMEOUT);
		this.store.release(withTerm(lease, lease.term() + 1), TIMEOUT);
		assertThat(read(group).hasLiveHolder()).isTrue();
		assertThat(read(group).holder()).isEqualTo("a");
		this.store.release(lease, TIMEOUT);
		Lease released = read(group);
		assertThat(released.holder()).isNull();
		assertThat(released.isExpired()).isTrue();
		assertThat(released.term()).isEqualTo(lease.term());
		Lease next = acquire(createStore(), group, "b", LIVE).orElseThrow();
		assertThat(next.term()).isGreaterThan(lease.term());
		assertThat(next.activeIn()).isZero();
	}

	@Test
	void ignoresStaleReleaseAfterTakeOver() {
		String group = newGroup();
		Lease old = acquire(this.store, group, "a", LIVE).orElseThrow();
		this.store.release(old, TIMEOUT);
		LeaseStore other = createStore();
		Lease lease = acquire(other, group, "b", LIVE).orElseThrow();
		this.store.release(old, TIMEOUT);
		assertThat(read(group).holder()).isEqualTo("b");
		assertThat(read(group).hasLiveHolder()).isTrue();
		assertThat(other.renew(lease, RENEWED, TIMEOUT)).isPresent();
	}

	@Test
	protected void termsOnlyGrowAcrossAcquireExpiryReleaseForceAndClear() throws Exception {
		String group = newGroup();
		LeaseStore other = createStore();
		List<Long> terms = new ArrayList<>();
		Lease a = acquire(this.store, group, "a", LIVE).orElseThrow();
		terms.add(a.term());
		terms.add(acquire(this.store, group, "a", SHORT).orElseThrow().term());
		awaitExpiry(group);
		terms.add(read(group).term());
		Lease b = acquire(other, group, "b", LIVE).orElseThrow();
		terms.add(b.term());
		other.release(b, TIMEOUT);
		terms.add(read(group).term());
		terms.add(acquire(this.store, group, "a", LIVE).orElseThrow().term());
		admin().forceLeader(group, "b", TIMEOUT);
		terms.add(read(group).term());
		terms.add(acquire(other, group, "b", LIVE).orElseThrow().term());
		admin().clear(group, TIMEOUT);
		terms.add(read(group).term());
		terms.add(acquire(this.store, group, "c", LIVE).orElseThrow().term());
		assertThat(terms).isSorted();
		assertThat(List.of(terms.get(0), terms.get(1), terms.get(3), terms.get(5), terms.get(7), terms.get(9)))
			.doesNotHaveDuplicates();
	}

	@Test
	protected void forcedLeaderTakesOverOnlyAfterCurrentLeaseEnds() throws Exception {
		String group = newGroup();
		Lease old = acquire(this.store, group, "a", LIVE).orElseThrow();
		Duration remainder = read(group).expiresIn();
		LeaseStore target = createStore();
		LeaseStore bystander = createStore();
		admin().forceLeader(group, "b", TIMEOUT);
		assertThat(this.store.renew(old, LIVE, TIMEOUT)).isEmpty();
		Lease forced = read(group);
		assertThat(forced.holder()).isEqualTo("b");
		assertThat(forced.term()).isGreaterThan(old.term());
		assertThat(forced.hasLiveHolder()).isTrue();
		assertThat(acquire(bystander, group, "c", LIVE)).isEmpty();
		Lease lease = acquire(target, group, "b", LIVE).orElseThrow();
		assertThat(lease.holder()).isEqualTo("b");
		assertThat(lease.term()).isGreaterThan(forced.term());
		assertThat(lease.activeIn()).isPositive().isLessThanOrEqualTo(remainder);
		assertThat(acquire(bystander, group, "c", LIVE)).isEmpty();
		assertThat(this.store.renew(old, LIVE, TIMEOUT)).isEmpty();
	}

	@Test
	void forcingTheCurrentHolderChangesNothing() {
		String group = newGroup();
		Lease held = acquire(this.store, group, "a", LIVE).orElseThrow();
		admin().forceLeader(group, "a", TIMEOUT);
		assertThat(read(group).term()).isEqualTo(held.term());
		assertThat(this.store.renew(held, LIVE, TIMEOUT)).isPresent();
	}

	@Test
	protected void forcingLeaderOfUnknownGroupLetsItInAtOnce() throws Exception {
		String group = newGroup();
		admin().forceLeader(group, "b", TIMEOUT);
		Lease forced = read(group);
		assertThat(forced.holder()).isEqualTo("b");
		Lease lease = acquire(createStore(), group, "b", LIVE).orElseThrow();
		assertThat(lease.term()).isPositive().isGreaterThan(forced.term());
		assertThat(lease.activeIn()).isZero();
	}

	@Test
	void clearingRemovesHolderButKeepsTermAndLeaseEnd() {
		String group = newGroup();
		Lease old = acquire(this.store, group, "a", LIVE).orElseThrow();
		admin().clear(group, TIMEOUT);
		assertThat(this.store.renew(old, LIVE, TIMEOUT)).isEmpty();
		Lease cleared = read(group);
		assertThat(cleared.holder()).isNull();
		assertThat(cleared.term()).isEqualTo(old.term());
		assertThat(cleared.expiresIn()).isPositive();
		Lease lease = acquire(createStore(), group, "b", LIVE).orElseThrow();
		assertThat(lease.term()).isGreaterThan(old.term());
		assertThat(lease.activeIn()).isPositive().isLessThanOrEqualTo(cleared.expiresIn());
	}

	@Test
	void releasingWhileWaitingOutAnEarlierHolderKeepsTheWait() {
		String group = newGroup();
		acquire(this.store, group, "a", LIVE).orElseThrow();
		admin().clear(group, TIMEOUT);
		// b takes over the cleared lease and must wait out a's, then gives up before
		// acting:
		// a may still believe, so c must wait too.
		Lease waiting = acquire(createStore(), group, "b", LIVE).orElseThrow();
		assertThat(waiting.activeIn()).isPositive();
		this.store.release(waiting, TIMEOUT);
		Lease next = acquire(createStore(), group, "c", LIVE).orElseThrow();
		assertThat(next.term()).isGreaterThan(waiting.term());
		assertThat(next.activeIn()).isPositive();
	}

	/**
	 * An operator who forces leaders, yields and forces re-elections through two
	 * instances as fast as the calls return names each candidate in terms its elector
	 * never acquired, again and again, sometimes while that elector's renewal is on its
	 * way: that must not be taken for another process using its candidate id, and a
	 * leader must follow once the storm is over. A store may refuse an action (ZooKeeper
	 * forces only a candidate queued in the group).
	 */
	@Test
	void operatorStormThroughTwoEnginesRaisesNoDuplicateIdConflict() throws Exception {
		admin();
		String group = newGroup();
		ElectionTiming timing = new ElectionTiming(Duration.ofSeconds(3), Duration.ofSeconds(2),
				Duration.ofMillis(300));
		List<String> conflicts = Collections.synchronizedList(new ArrayList<>());
		ScheduledExecutorService watcher = Executors.newSingleThreadScheduledExecutor();
		try (LeaderElectionEngine a = stormEngine("storm-a", timing);
				LeaderElectionEngine b = stormEngine("storm-b", timing)) {
			LeaderElection onA = a.join(group);
			LeaderElection onB = b.join(group);
			await().atMost(EXPIRY_WAIT).until(() -> onA.isLeader() || onB.isLeader());
			// A conflict lasts only while the lease it names lives: looked for all along.
			watcher.scheduleWithFixedDelay(() -> {
				for (LeaderElectionEngine engine : List.of(a, b)) {
					engine.status(group)
						.flatMap(ElectionStatus::conflict)
						.ifPresent((conflict) -> conflicts.add(engine.candidateId() + ": " + conflict));
				}
			}, 0, 5, TimeUnit.MILLISECONDS);
			for (int i = 0; i < 200; i++) {
				LeaderElection election = (i % 2 == 0) ? onA : onB;
				try {
					switch ((i / 2) % 4) {
						case 0 -> election.forceLeader("storm-a");
						case 1 -> election.yieldLeadership();
						case 2 -> election.forceReelection();
						default -> election.forceLeader("storm-b");
					}
				}
				catch (RuntimeException refused) {
					// The store refused the action; the storm goes on.
				}
			}
			await().atMost(EXPIRY_WAIT.multipliedBy(2)).until(() -> onA.isLeader() || onB.isLeader());
		}
		finally {
			watcher.shutdownNow();
		}
		assertThat(conflicts).isEmpty();
	}

	private LeaderElectionEngine stormEngine(String candidateId, ElectionTiming timing) {
		LeaderElectionEngine engine = LeaderElectionEngine.builder(createStore())
			.candidateId(candidateId)
			.timing(timing)
			.build();
		engine.start();
		return engine;
	}

	@Test
	void clearingUnknownGroupDoesNothing() {
		String group = newGroup();
		admin().clear(group, TIMEOUT);
		assertThat(this.store.read(group, TIMEOUT)).isEmpty();
	}

	@Test
	void electsExactlyOneOfRacingCandidatesOnEmptyGroup() throws Exception {
		String group = newGroup();
		List<Lease> winners = race(group, 16);
		assertThat(winners).hasSize(1);
		assertThat(read(group).holder()).isEqualTo(winners.get(0).holder());
		assertThat(read(group).term()).isEqualTo(winners.get(0).term());
	}

	@Test
	void electsExactlyOneOfRacingCandidatesOnReleasedGroup() throws Exception {
		String group = newGroup();
		Lease old = acquire(this.store, group, "a", LIVE).orElseThrow();
		this.store.release(old, TIMEOUT);
		List<Lease> winners = race(group, 16);
		assertThat(winners).hasSize(1);
		assertThat(winners.get(0).term()).isGreaterThan(old.term());
		assertThat(read(group).holder()).isEqualTo(winners.get(0).holder());
	}

	@Test
	void treatsGroupAndCandidateNamesAsData() {
		String group = newGroup() + "'; DROP TABLE x; -- \" ` /* */ \\";
		String candidate = "c'); DELETE FROM y; --\"`\\";
		Lease lease = acquire(this.store, group, candidate, LIVE).orElseThrow();
		assertThat(lease.holder()).isEqualTo(candidate);
		assertThat(read(group).holder()).isEqualTo(candidate);
		assertThat(this.store.renew(lease, RENEWED, TIMEOUT)).isPresent();
		assertThat(this.store.read(newGroup(), TIMEOUT)).isEmpty();
	}

	/**
	 * Checks that the store's configurable identifier cannot carry SQL, key or path
	 * syntax. A store with no such identifier overrides this with a test showing that
	 * there is none.
	 */
	@Test
	protected void rejectsUnsafeIdentifiers() {
		SoftAssertions softly = new SoftAssertions();
		for (String unsafe : List.of("x; DROP TABLE y", "a b", "", " ", "1abc", "x'", "x\"", "x`", "x--", "x/*y*/",
				"x;", "x\n", "x\u0000", "x)", "x(")) {
			softly.assertThatThrownBy(() -> createStoreWithIdentifier(unsafe))
				.as("identifier '%s'", unsafe)
				.isInstanceOf(IllegalArgumentException.class)
				.hasMessageContaining("'" + unsafe + "'")
				.hasMessageMatching("(?s).*must match \\^.+\\$.*");
		}
		softly.assertAll();
	}

	@Test
	void namesItsBackend() {
		assertThat(this.store.backend()).isNotBlank();
	}

	private List<Lease> race(String group, int candidates) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(candidates);
		try {
			CountDownLatch ready = new CountDownLatch(candidates);
			CountDownLatch start = new CountDownLatch(1);
			List<Future<Optional<Lease>>> attempts = new ArrayList<>();
			for (int i = 0; i < candidates; i++) {
				LeaseStore candidateStore = createStore();
				String candidate = "candidate-" + i;
				attempts.add(executor.submit(() -> {
					ready.countDown();
					start.await();
					return candidateStore.tryAcquire(group, candidate, LIVE, TIMEOUT);
				}));
			}
			assertThat(ready.await(30, TimeUnit.SECONDS)).isTrue();
			start.countDown();
			List<Lease> winners = new ArrayList<>();
			for (Future<Optional<Lease>> attempt : attempts) {
				attempt.get(60, TimeUnit.SECONDS).ifPresent(winners::add);
			}
			return winners;
		}
		finally {
			executor.shutdownNow();
		}
	}

	// A store declares what it can do beyond the four calls of LeaseStore; the tests of
	// a capability run on the stores that declare it.

	private BatchLeaseStore batches() {
		return capability(BatchLeaseStore.class);
	}

	private CandidateListStore candidates() {
		return capability(CandidateListStore.class);
	}

	private ChangeFeedStore feed() {
		return capability(ChangeFeedStore.class);
	}

	private AdminLeaseStore admin() {
		return capability(AdminLeaseStore.class);
	}

	private <T extends LeaseStore> T capability(Class<T> type) {
		return as(type, this.store);
	}

	private static <T extends LeaseStore> T as(Class<T> type, LeaseStore store) {
		Assumptions.assumeTrue(type.isInstance(store),
				() -> "the " + store.backend() + " store does not declare " + type.getSimpleName());
		return type.cast(store);
	}

	private Optional<Lease> acquire(LeaseStore store, String group, String candidate, Duration leaseDuration) {
		return store.tryAcquire(group, candidate, leaseDuration, TIMEOUT);
	}

	private Lease read(String group) {
		return this.store.read(group, TIMEOUT).orElseThrow();
	}

	private void awaitExpiry(String group) {
		await().atMost(EXPIRY_WAIT).pollInterval(Duration.ofMillis(50)).until(() -> read(group).isExpired());
	}

	private static Lease withHolder(Lease lease, String holder) {
		return new Lease(lease.group(), holder, lease.term(), lease.expiresIn(), lease.activeIn(), lease.version());
	}

	private static Lease withTerm(Lease lease, long term) {
		return new Lease(lease.group(), lease.holder(), term, lease.expiresIn(), lease.activeIn(), lease.version());
	}

	private static String newGroup() {
		return "group-" + UUID.randomUUID();
	}

}
