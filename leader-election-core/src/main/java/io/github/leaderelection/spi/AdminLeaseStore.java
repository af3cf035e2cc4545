package io.github.leaderelection.spi;

import java.time.Duration;

/**
 * A store through which an operator can move a group's leadership: force a candidate to
 * lead, or clear the lease for a re-election. On a store without it, those operations
 * fail with a message that says so.
 */
public interface AdminLeaseStore extends LeaseStore {

	/**
	 * Names a candidate as holder with a new term, keeping the current lease end, so that
	 * the current holder's renewals fail and the candidate takes over (through
	 * {@link #tryAcquire}, with yet another term) once the current lease is over. Does
	 * nothing if the candidate already holds the lease. The engine only ever renews
	 * leases that {@code tryAcquire} returned, never one it read, so the forced term
	 * itself is never acted on.
	 * @param group the group
	 * @param candidateId the candidate to lead
	 * @param timeout how long the call may take
	 */
	void forceLeader(String group, String candidateId, Duration timeout);

	/**
	 * Removes the holder, keeping the term and the current lease end, so that the current
	 * holder's renewals fail and any candidate may take over once the current lease is
	 * over.
	 * @param group the group
	 * @param timeout how long the call may take
	 */
	void clear(String group, Duration timeout);

}
