package io.github.leaderelection.spi;

import java.time.Duration;
import java.util.Optional;

/**
 * The storage a backend provides to the election engine: a record per group holding a
 * holder, a term and a lease that the store expires by its own clock. A store implements
 * the four calls below; what it can do beyond them it declares by implementing the
 * capability interfaces, which the engine discovers: {@link BatchLeaseStore} (many groups
 * in one request), {@link CandidateListStore} (the live candidates that balancing spreads
 * the groups over), {@link ChangeFeedStore} (telling the engine of a change at once, and
 * queueing candidates), {@link AdminLeaseStore} (forcing a leader, clearing a lease) and
 * {@link RunRecordStore} (the runs of leader-only jobs, claimed under the lease).
 *
 * <p>
 * A store is thread-safe. The election's timing is the engine's: when to renew, retry,
 * step down or take over; a store only keeps each call within the timeout it is given,
 * returning or failing by then, and keeps its own connections alive (reconnecting,
 * subscribing again). What one call does to one group's record is atomic on the server,
 * and a call may take several round trips. Failures are thrown as exceptions; the engine
 * survives them.
 *
 * <p>
 * The truth about a lease is always the server's: a store may remember what it read,
 * wrote or heard (the terms it saw, see {@link SeenTerms}; its watches and the
 * connections that carry them; on stores that queue candidates, the candidates' places; a
 * lease of the server's own that carries its records), but never grants, renews or
 * releases on what it remembers alone. A store uses the clients it is given (a
 * {@code DataSource}, a Redis connection factory, a Curator client, an etcd client) and
 * never closes them; {@link #close()} ends only what the store opened itself.
 *
 * <p>
 * The rules every store keeps (checked by the contract tests):
 * <ul>
 * <li>a lease is taken only when it is free, expired or already names the candidate, and
 * every take increments the term, which never decreases (not even after
 * {@link AdminLeaseStore#clear});</li>
 * <li>renew and release act only while the record has the lease's holder and term (and
 * its {@linkplain Lease#version() version}, on a store that hands one out), and a renewal
 * hands out the lease to name next;</li>
 * <li>expiry is judged by the store's clock alone.</li>
 * </ul>
 */
public interface LeaseStore extends AutoCloseable {

	/**
	 * Reads a group's lease.
	 * @param group the group
	 * @param timeout how long the call may take
	 * @return the lease, or empty when the group has never been led
	 */
	Optional<Lease> read(String group, Duration timeout);

	/**
	 * Takes the lease for the candidate if {@link Lease#isAcquirableBy} holds in the
	 * store at that instant, with a term greater than every earlier term of the group,
	 * expiring {@code leaseDuration} from now.
	 * @param group the group
	 * @param candidateId the candidate that takes it
	 * @param leaseDuration how long the lease lasts by the store's clock
	 * @param timeout how long the call may take
	 * @return the lease taken (its {@link Lease#activeIn()} is positive when an unexpired
	 * lease of another holder was taken over), or empty when another candidate holds a
	 * live lease
	 */
	Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout);

	/**
	 * Extends the lease to {@code leaseDuration} from now, only if it still has this
	 * lease's holder and term (and {@linkplain Lease#version() version}, on a store that
	 * hands one out).
	 * @param lease a lease {@link #tryAcquire} returned, or the last renewal of it
	 * @param leaseDuration how long the lease lasts from now by the store's clock
	 * @param timeout how long the call may take
	 * @return the lease as renewed (its holder and term unchanged; the engine renews and
	 * releases this one from now on), or empty when it was refused
	 */
	Optional<Lease> renew(Lease lease, Duration leaseDuration, Duration timeout);

	/**
	 * Ends the lease at once, only if it still has this lease's holder and term (and
	 * version, on a store that hands one out); otherwise does nothing. The caller must
	 * have stopped acting as leader before calling this. A holder that was still waiting
	 * out an earlier holder ({@link Lease#activeIn()}) leaves that wait in place for the
	 * next one.
	 * @param lease a lease {@link #tryAcquire} returned, or the last renewal of it
	 * @param timeout how long the call may take
	 */
	void release(Lease lease, Duration timeout);

	/**
	 * A short name of the store type for logs, health and metrics, such as {@code jdbc}.
	 * The default is the class's simple name.
	 * @return the name
	 */
	default String backend() {
		return getClass().getSimpleName();
	}

	/**
	 * Ends what the store opened itself (listening connections, listeners it added to the
	 * client it was given), leaving the application's clients open. Called after the
	 * engines that use the store are closed; a Spring context calls it when it closes the
	 * store's bean. Calling it again does nothing. Stores that open nothing keep this
	 * default.
	 */
	@Override
	default void close() {
	}

}
