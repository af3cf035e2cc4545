package io.github.leaderelection.spi;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;

/**
 * A store that reads, takes and renews the leases of many groups in one request (a
 * transaction, a script, a multi-operation), so that a node with many groups needs one
 * round trip per retry period. Each group is judged on its own, as the single call would
 * judge it: one group's outcome never keeps another's from happening. A store without
 * this capability is called group by group ({@link Batches}).
 */
public interface BatchLeaseStore extends LeaseStore {

	/**
	 * Takes the leases of several groups for the candidate, each the way
	 * {@link #tryAcquire} takes one; a group held by another candidate is left alone.
	 * @param groups distinct groups
	 * @param candidateId the candidate that takes them
	 * @param leaseDuration how long each lease lasts by the store's clock
	 * @param timeout how long the call may take
	 * @return the leases taken, by group; a group missing from it is held by another
	 * candidate
	 * @throws BatchCutShortException if it answered for some groups and not for the
	 * others, with what it did for those it answered
	 */
	Map<String, Lease> tryAcquireAll(Collection<String> groups, String candidateId, Duration leaseDuration,
			Duration timeout);

	/**
	 * Renews several leases, of different groups, each the way {@link #renew} renews one;
	 * a lease no longer held is left alone.
	 * @param leases leases of distinct groups
	 * @param leaseDuration how long each lease lasts from now by the store's clock
	 * @param timeout how long the call may take
	 * @return the leases as renewed, by group; a group missing from it was refused
	 * @throws BatchCutShortException if it answered for some groups and not for the
	 * others, with what it did for those it answered
	 */
	Map<String, Lease> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout);

	/**
	 * Reads several groups' leases, each the way {@link #read} reads one.
	 * @param groups distinct groups
	 * @param timeout how long the call may take
	 * @return the leases of the groups that have been led, by group
	 * @throws BatchCutShortException if it answered for some groups and not for the
	 * others, with what it found for those it answered
	 */
	Map<String, Lease> readAll(Collection<String> groups, Duration timeout);

}
