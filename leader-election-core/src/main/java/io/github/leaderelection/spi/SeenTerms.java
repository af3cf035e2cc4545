package io.github.leaderelection.spi;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The highest term a store instance has seen of each group, and the one recipe every
 * store follows when its own data turns out to be lost or changed by hand: a record
 * deleted, the data wiped, an older snapshot restored, a term lowered.
 *
 * <p>
 * A grant on a record that is missing, or whose term is below a term seen, is
 * {@linkplain #isLost lost}: the holder of the lost term may still believe it leads for
 * up to a lease duration, so the new holder waits {@linkplain #lostWait one lease
 * duration} before it acts, and takes a {@linkplain #nextTerm term} above every term
 * seen. A record whose term is not positive is lost too, whatever was seen: terms are
 * positive. So is a record that names a candidate of this instance in a term it
 * {@linkplain #gaveUp gave up}: its holder knows that the store had moved on. Every store
 * also keeps every grant's term at or above a clock reading in microseconds (the store's
 * where it tells the time), so that no term is handed out twice, not even by an instance
 * that did not see the later one. The Redis store applies the same rule inside its
 * scripts, with the terms seen passed to them.
 *
 * <p>
 * NOTE: an instance knows only what it has seen, and reads each group once per retry
 * period. An instance that starts after the data was lost, or that has not read the group
 * since its last grant, cannot tell an older record from the truth and may grant it at
 * once, while the holder of the latest term believes until its next renewal finds the
 * record changed. Fencing by term refuses that holder's writes once the new one has
 * written. See the security page for the writes to the election's data that the
 * guarantees cover.
 */
public final class SeenTerms {

	private static final Logger logger = LoggerFactory.getLogger(SeenTerms.class);

	private final Map<String, Long> terms = new ConcurrentHashMap<>();

	private final Map<String, SeenLease> leases = new ConcurrentHashMap<>();

	private final Map<String, Long> longestLeases = new ConcurrentHashMap<>();

	private final Map<HolderOf, Long> givenUp = new ConcurrentHashMap<>();

	private final String backend;

	/**
	 * @param backend the store's {@link LeaseStore#backend() name}, for the warning
	 */
	public SeenTerms(String backend) {
		this.backend = Objects.requireNonNull(backend, "backend");
	}

	/** Remembers a term read or granted; a lower one than seen before changes nothing. */
	public void saw(String group, long term) {
		this.terms.merge(group, term, Math::max);
	}

	/**
	 * Remembers a live lease of another candidate read from the store: until its end, on
	 * this machine's monotonic clock, its holder may believe, even if the store later
	 * says otherwise in the same term (a restore of an older copy, a lease end moved back
	 * by hand).
	 * @param readStartNanos {@link System#nanoTime()} when the read was sent, from which
	 * the lease's time left counts
	 */
	public void sawLease(Lease lease, long readStartNanos) {
		saw(lease.group(), lease.term());
		if (lease.hasLiveHolder()) {
			this.longestLeases.merge(lease.group(), lease.expiresIn().toNanos(), Math::max);
			SeenLease seen = new SeenLease(lease.holder(), lease.term(), readStartNanos + lease.expiresIn().toNanos());
			this.leases.merge(lease.group(), seen, (old, now) -> now.isLaterThan(old) ? now : old);
		}
	}

	/**
	 * How long the holder of the group's record may still believe by what this instance
	 * saw: the time left of the last live lease seen, when the record still names its
	 * holder in its term; zero otherwise (a release names nobody, a new grant has another
	 * term).
	 */
	public Duration seenLeaseLeft(String group, @Nullable String holder, long term) {
		SeenLease seen = this.leases.get(group);
		if (seen == null || holder == null || !holder.equals(seen.holder()) || term != seen.term()) {
			return Duration.ZERO;
		}
		return Duration.ofNanos(Math.max(0, seen.endNanos() - System.nanoTime()));
	}

	/**
	 * The holder of the last live lease seen of the group in the highest term seen, or
	 * {@code null}: for a store that judges {@link #seenLeaseLeft} inside the store, with
	 * {@link #seenLeaseLeft(String)}.
	 */
	public @Nullable String seenHolder(String group) {
		SeenLease seen = this.leases.get(group);
		return (seen != null && seen.term() == seen(group)) ? seen.holder() : null;
	}

	/** The time left of the lease of {@link #seenHolder}, zero if none. */
	public Duration seenLeaseLeft(String group) {
		String holder = seenHolder(group);
		return (holder != null) ? seenLeaseLeft(group, holder, seen(group)) : Duration.ZERO;
	}

	/** The highest term seen of the group, 0 if none. */
	public long seen(String group) {
		return this.terms.getOrDefault(group, 0L);
	}

	/**
	 * Whether a record shows that the store lost what this instance saw of the group.
	 * @param storedTerm the record's term, or {@code null} when the group has no record
	 */
	public boolean isLost(String group, @Nullable Long storedTerm) {
		if (storedTerm == null) {
			return seen(group) > 0;
		}
		return storedTerm < seen(group) || storedTerm < 0;
	}

	/**
	 * Whether a record shows that the store lost what this instance saw of the group, or
	 * that it was changed: a record that names a candidate in a term it
	 * {@linkplain #gaveUp gave up} (released, or whose renewal the store refused) is
	 * older than the store's truth, in which another candidate may lead by now; one that
	 * names another holder than the live lease seen in the same term was changed by hand,
	 * since every grant takes a new term.
	 * @param storedTerm the record's term, or {@code null} when the group has no record
	 * @param storedHolder the holder the record names, if any
	 */
	public boolean isLost(String group, @Nullable Long storedTerm, @Nullable String storedHolder) {
		if (isLost(group, storedTerm)) {
			return true;
		}
		if (storedTerm == null || storedHolder == null) {
			return false;
		}
		String seenHolder = seenHolder(group);
		return storedTerm <= givenUp(group, storedHolder)
				|| (storedTerm == seen(group) && seenHolder != null && !seenHolder.equals(storedHolder));
	}

	/**
	 * Remembers that a candidate gave up its lease of the group in a term: it released
	 * it, or the store refused to renew it. The store never names it in that term again,
	 * unless it went back to an older copy or was changed by hand.
	 */
	public void gaveUp(String group, String holder, long term) {
		this.givenUp.merge(new HolderOf(group, holder), term, Math::max);
	}

	/**
	 * The highest term in which the candidate {@linkplain #gaveUp gave up} the group, 0
	 * if none.
	 */
	public long givenUp(String group, String holder) {
		return this.givenUp.getOrDefault(new HolderOf(group, holder), 0L);
	}

	/**
	 * The term of the next grant of the group.
	 * @param storedTerm the record's term, or {@code null} when the group has no record
	 * @param clockMicros a clock reading in microseconds, the store's where it has one: a
	 * floor for the term of a grant on a lost record, never a judge of expiry
	 */
	public long nextTerm(String group, @Nullable Long storedTerm, long clockMicros) {
		long stored = (storedTerm != null) ? storedTerm : 0;
		if (!isLost(group, storedTerm)) {
			return Math.max(stored, 0) + 1;
		}
		return Math.max(Math.max(stored, seen(group)) + 1, clockMicros);
	}

	/**
	 * How long the new holder of a lost record waits before it acts: the holder of the
	 * lost term may believe for up to its own lease duration, which is at least as long
	 * as the longest time left this instance read on a live lease of the group (holders
	 * configured with a longer lease than this one's, during a rolling change).
	 * @param otherWait the wait the grant has for other reasons
	 * @param leaseDuration this candidate's lease duration
	 */
	public Duration lostWait(String group, Duration otherWait, Duration leaseDuration) {
		Duration longest = Duration
			.ofNanos(Math.max(leaseDuration.toNanos(), this.longestLeases.getOrDefault(group, 0L)));
		return (otherWait.compareTo(longest) >= 0) ? otherWait : longest;
	}

	/**
	 * Logs that a record still named the holder and term of a lease seen live, but ended
	 * earlier than seen.
	 */
	public void warnMovedBack(String group, Duration left) {
		logger.warn("The lease of group '{}' in the {} store ended earlier than this instance saw it last: the store "
				+ "went back to an older copy, or it was changed by hand. The new holder waits {} ms more before it "
				+ "acts", group, this.backend, left.toMillis());
	}

	/** Logs, once per grant, that a record was found lost and what follows. */
	public void warnLost(String group, long newTerm) {
		logger.warn("The lease record of group '{}' in the {} store is missing, older than term {}, which this "
				+ "instance saw, or names a holder in a term it gave up: the store lost data, or it was changed by "
				+ "hand. The new holder takes term {} and waits one lease duration before it acts", group, this.backend,
				seen(group), newTerm);
	}

	private record HolderOf(String group, String holder) {

	}

	private record SeenLease(String holder, long term, long endNanos) {

		boolean isLaterThan(SeenLease other) {
			return this.term > other.term || (this.term == other.term && this.endNanos - other.endNanos > 0);
		}

	}

}
