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
 */
public record Lease(String group, @Nullable String holder, long term, Duration expiresIn, Duration activeIn) {

	public Lease {
		Objects.requireNonNull(group, "group");
		Objects.requireNonNull(expiresIn, "expiresIn");
		Objects.requireNonNull(activeIn, "activeIn");
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
