package io.github.leaderelection.spi;

import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A group's lease as the store saw it at one instant, with its times measured by the
 * store's own clock and given relative to that instant, so that no two machines' wall
 * clocks are ever compared.
 *
 * @param group the group
 * @param holder the candidate holding the lease, or {@code null} after a release or a
 * forced re-election
 * @param term the term of the last grant; never decreases
 * @param expiresIn time left until the store lets others take the lease (zero or negative
 * when expired)
 * @param activeIn time left until the holder may act. Positive only right after the lease
 * was taken over from a holder whose lease had not run out (a forced leader, a forced
 * re-election): the new holder must not act before the old one's lease is surely over.
 * @param version the store's own mark of the record's state as it handed this lease out,
 * opaque to the engine, which hands it back unchanged: a store that compares more than
 * the holder and term on renew and release (ZooKeeper: the group node's version) finds it
 * here rather than in a cache of its own. Zero where holder and term suffice.
 */
public record Lease(String group, @Nullable String holder, long term, Duration expiresIn, Duration activeIn,
		long version) {

	public Lease {
		Objects.requireNonNull(group, "group");
		Objects.requireNonNull(expiresIn, "expiresIn");
		Objects.requireNonNull(activeIn, "activeIn");
	}

	/**
	 * A lease of a store whose holder and term identify the record's state: its version
	 * is zero.
	 * @param group the group
	 * @param holder the candidate holding the lease, or {@code null}
	 * @param term the term of the last grant
	 * @param expiresIn time left until the store lets others take the lease
	 * @param activeIn time left until the holder may act
	 */
	public Lease(String group, @Nullable String holder, long term, Duration expiresIn, Duration activeIn) {
		this(group, holder, term, expiresIn, activeIn, 0);
	}

	/**
	 * This lease as a renewal hands it out that changed nothing but its expiry: the same
	 * holder, term, wait and version, expiring {@code leaseDuration} from the renewal.
	 * @param leaseDuration how long the renewal made the lease last
	 * @return the renewed lease
	 */
	public Lease renewedFor(Duration leaseDuration) {
		return new Lease(this.group, this.holder, this.term, leaseDuration, this.activeIn, this.version);
	}

	/**
	 * This lease with another version, as a store hands it out after a write that changed
	 * its record.
	 * @param version the store's new version
	 * @return the lease
	 */
	public Lease withVersion(long version) {
		return new Lease(this.group, this.holder, this.term, this.expiresIn, this.activeIn, version);
	}

	/**
	 * This lease with another wait before its holder may act, as an engine that waits
	 * longer than the store asks sees it.
	 * @param activeIn the time left until the holder may act
	 * @return the lease
	 */
	public Lease withActiveIn(Duration activeIn) {
		return new Lease(this.group, this.holder, this.term, this.expiresIn, activeIn, this.version);
	}

	/** Whether the store would let another candidate take the lease. */
	public boolean isExpired() {
		return this.expiresIn.isZero() || this.expiresIn.isNegative();
	}

	/** Whether the given candidate holds the lease (expired or not). */
	public boolean isHeldBy(String candidateId) {
		return candidateId.equals(this.holder);
	}

	/**
	 * Whether the given candidate may try to acquire it: nobody holds it, the candidate
	 * itself does, or it expired. The same rule every store applies atomically in
	 * {@link LeaseStore#tryAcquire}.
	 */
	public boolean isAcquirableBy(String candidateId) {
		return this.holder == null || isHeldBy(candidateId) || isExpired();
	}

	/** Whether someone holds a lease that has not expired. */
	public boolean hasLiveHolder() {
		return this.holder != null && !isExpired();
	}

}
