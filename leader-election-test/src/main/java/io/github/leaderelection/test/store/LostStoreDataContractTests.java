package io.github.leaderelection.test.store;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import io.github.leaderelection.spi.Batches;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What every {@link LeaseStore} does when its own data is lost or changed by hand (a
 * record deleted, the data wiped, an older snapshot restored, a term lowered), checked
 * against a real store: a candidate that finds a record missing, or older than a term it
 * saw, takes it only with a term above every term it saw and waits one lease duration
 * before it acts, since the holder of the lost term may still believe it leads. A
 * backend's test subclasses this and says how to reach its store and how to change its
 * data by hand.
 */
public abstract class LostStoreDataContractTests {

	/** The lease duration of every grant: long enough to stay live through a test. */
	protected static final Duration LEASE = Duration.ofSeconds(30);

	/** The timeout given to every store call. */
	protected static final Duration TIMEOUT = Duration.ofSeconds(5);

	/**
	 * How much shorter than a lease duration the wait of a grant on a lost record may
	 * read: the time the call took, and stores that count whole seconds.
	 */
	private static final Duration WAIT_SLACK = Duration.ofSeconds(3);

	private LeaseStore store;

	private LeaseStore other;

	/**
	 * Returns a store to test. Every call within one test must reach the same storage:
	 * tests use several stores as candidates on several nodes would.
	 */
	protected abstract LeaseStore createStore();

	/** Deletes the groups' records, as an operator or a wipe of the store would. */
	protected abstract void delete(List<String> groups);

	/** Returns a copy of the group's record as it is in the store, to restore later. */
	protected abstract Object copy(String group);

	/** Writes back a copy of the group's record made earlier, as a restore would. */
	protected abstract void restore(String group, Object copy);

	/** Sets the term in the group's record, keeping the rest of it. */
	protected abstract void setTerm(String group, long term);

	/**
	 * Names another holder in the group's record, in the same term, and ends its lease
	 * where the record says when it ends, as a hand edit would.
	 */
	protected abstract void setHolder(String group, String holder);

	@BeforeEach
	void createStores() {
		this.store = createStore();
		this.other = createStore();
	}

	@Test
	void deletedRecordIsTakenOnlyAfterOneLeaseWithAGreaterTerm() {
		String group = newGroup();
		Lease held = acquire(this.store, group, "a");
		assertThat(this.other.read(group, TIMEOUT)).isPresent();
		delete(List.of(group));
		Lease taken = acquire(this.other, group, "b");
		assertThat(taken.term()).isGreaterThan(held.term());
		assertWaitsOneLease(taken);
		assertThat(this.store.renew(held, LEASE, TIMEOUT)).isEmpty();
	}

	@Test
	void wipedRecordsAreTakenInOneCallOnlyAfterOneLeaseWithGreaterTerms() {
		List<String> groups = List.of(newGroup(), newGroup(), newGroup());
		Map<String, Lease> held = Batches.tryAcquireAll(this.store, groups, "a", LEASE, TIMEOUT);
		assertThat(held).containsOnlyKeys(groups);
		assertThat(Batches.readAll(this.other, groups, TIMEOUT)).containsOnlyKeys(groups);
		delete(groups);
		// A store may answer from the read it has just made (etcd), which still saw them
		// held: the engine tries again in its next round, and so does this test.
		Map<String, Lease> taken = new HashMap<>();
		await().atMost(Duration.ofSeconds(10)).until(() -> {
			taken.putAll(Batches.tryAcquireAll(this.other, groups, "b", LEASE, TIMEOUT));
			return taken.keySet().containsAll(groups);
		});
		for (String group : groups) {
			assertThat(taken.get(group).term()).isGreaterThan(held.get(group).term());
			assertWaitsOneLease(taken.get(group));
		}
		assertThat(Batches.renewAll(this.store, held.values(), LEASE, TIMEOUT).keySet()).isEmpty();
	}

	@Test
	void olderRecordRestoredIsTakenOnlyAfterOneLeaseWithATermAboveEveryTermSeen() {
		String group = newGroup();
		this.store.release(acquire(this.store, group, "a"), TIMEOUT);
		Object older = copy(group);
		this.other.release(acquire(this.other, group, "b"), TIMEOUT);
		Lease last = acquire(this.store, group, "a");
		this.store.release(last, TIMEOUT);
		assertThat(this.other.read(group, TIMEOUT).orElseThrow().term()).isEqualTo(last.term());
		restore(group, older);
		assertThat(this.other.read(group, TIMEOUT).orElseThrow().term()).isLessThan(last.term());
		Lease taken = acquire(this.other, group, "b");
		assertThat(taken.term()).isGreaterThan(last.term());
		assertWaitsOneLease(taken);
	}

	/**
	 * A restore of a copy made in the same term, before the holder's last renewal: the
	 * record still names the holder and term everyone saw, with an end that passes before
	 * the end the holder renewed to, until which it may believe. A candidate that saw the
	 * later end takes the group only with a wait (or not at all, where the store ends a
	 * lease otherwise than by the time in its record).
	 */
	@Test
	void leaseEndMovedBackInTheSameTermIsWaitedOutAsSeen() throws Exception {
		Duration lease = Duration.ofSeconds(3);
		String group = newGroup();
		Lease held = acquire(this.store, group, "a", lease);
		Object older = copy(group);
		Thread.sleep(1500);
		assertThat(this.store.renew(held, lease, TIMEOUT)).isPresent();
		assertThat(this.other.read(group, TIMEOUT).orElseThrow().hasLiveHolder()).isTrue();
		restore(group, older);
		// Past the end of the copy (3 s after the grant), well before the end renewed to
		// (3 s after the renewal, 1.5 s after the grant).
		Thread.sleep(1700);
		Optional<Lease> taken = this.other.tryAcquire(group, "b", LEASE, TIMEOUT);
		taken.ifPresent((next) -> assertThat(next.activeIn()).as("wait of the holder of %s", group).isPositive());
	}

	/**
	 * A restore of a copy that names a candidate in a term it has given up since, while
	 * another candidate leads in a later term: the candidate, which has not read the
	 * group since it released, knows the record is older than the store's truth, and
	 * takes it only with a wait (or not at all, where the store ends a lease otherwise
	 * than by the time in its record).
	 */
	@Test
	void recordRestoredToATermItsHolderGaveUpIsTakenByItOnlyAfterOneLease() {
		String group = newGroup();
		// A short lease in the copy: what the record says is left of it is no wait.
		Lease given = acquire(this.store, group, "a", Duration.ofSeconds(2));
		Object older = copy(group);
		this.store.release(given, TIMEOUT);
		Lease last = acquire(this.other, group, "b");
		restore(group, older);
		Optional<Lease> taken = this.store.tryAcquire(group, "a", LEASE, TIMEOUT);
		taken.ifPresent((next) -> {
			assertThat(next.term()).isGreaterThan(last.term());
			assertWaitsOneLease(next);
		});
	}

	/**
	 * A record edited by hand to name another holder in the term everyone saw, with its
	 * lease ended: no grant names two holders in one term, so a candidate that saw the
	 * first takes the record as changed, and takes it only with a wait (or not at all,
	 * where the store ends a lease otherwise than by the time in its record), while the
	 * holder it replaced may believe.
	 */
	@Test
	void holderChangedByHandInTheTermSeenIsTakenOnlyAfterOneLease() {
		String group = newGroup();
		Lease held = acquire(this.store, group, "a");
		assertThat(this.other.read(group, TIMEOUT).orElseThrow().holder()).isEqualTo("a");
		setHolder(group, "b");
		Optional<Lease> taken = this.other.tryAcquire(group, "b", LEASE, TIMEOUT);
		taken.ifPresent((next) -> {
			assertThat(next.term()).isGreaterThan(held.term());
			assertWaitsOneLease(next);
		});
	}

	@Test
	void loweredTermIsTakenOnlyAfterOneLeaseWithATermAboveEveryTermSeen() {
		String group = newGroup();
		Lease last = acquire(this.store, group, "a");
		this.store.release(last, TIMEOUT);
		assertThat(this.other.read(group, TIMEOUT).orElseThrow().term()).isEqualTo(last.term());
		setTerm(group, last.term() - 1);
		Lease taken = acquire(this.other, group, "b");
		assertThat(taken.term()).isGreaterThan(last.term());
		assertWaitsOneLease(taken);
	}

	@Test
	void termSetBelowOneIsTakenWithAPositiveTermByACandidateThatSawNothing() {
		String group = newGroup();
		this.store.release(acquire(this.store, group, "a"), TIMEOUT);
		setTerm(group, -7);
		Lease taken = acquire(createStore(), group, "c");
		assertThat(taken.term()).isPositive();
	}

	@Test
	void groupNeverLedIsStillTakenAtOnce() {
		String group = newGroup();
		Lease taken = acquire(this.store, group, "a");
		assertThat(taken.activeIn()).isZero();
	}

	private static Lease acquire(LeaseStore store, String group, String candidateId) {
		return acquire(store, group, candidateId, LEASE);
	}

	private static Lease acquire(LeaseStore store, String group, String candidateId, Duration leaseDuration) {
		Optional<Lease> lease = store.tryAcquire(group, candidateId, leaseDuration, TIMEOUT);
		assertThat(lease).as("lease of %s taken by %s", group, candidateId).isPresent();
		return lease.get();
	}

	private static void assertWaitsOneLease(Lease taken) {
		assertThat(taken.activeIn()).as("wait of the holder of %s", taken.group())
			.isGreaterThan(LEASE.minus(WAIT_SLACK));
	}

	private static String newGroup() {
		return "lost-" + UUID.randomUUID().toString().substring(0, 8);
	}

}
