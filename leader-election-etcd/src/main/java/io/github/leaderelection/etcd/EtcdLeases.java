package io.github.leaderelection.etcd;

import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.options.LeaseOption;
import org.jspecify.annotations.Nullable;

/**
 * The etcd leases behind the store's leases: each lives for the lease duration in whole
 * seconds ({@link EtcdLeaseStore#ttlSeconds}) unless kept alive, and takes the group's
 * lease key with it when it ends.
 */
final class EtcdLeases {

	private final Lease leases;

	EtcdLeases(Client client) {
		this.leases = client.getLeaseClient();
	}

	/** A new etcd lease of the given TTL, by its id. */
	CompletableFuture<Long> grant(long ttlSeconds) {
		return this.leases.grant(ttlSeconds).thenApply(LeaseGrantResponse::getID);
	}

	/** Seconds left on an etcd lease, or -1 when it is gone (or there is none). */
	CompletableFuture<Long> timeToLive(long leaseId) {
		if (leaseId == 0) {
			return CompletableFuture.completedFuture(-1L);
		}
		return this.leases.timeToLive(leaseId, LeaseOption.DEFAULT).thenApply(LeaseTimeToLiveResponse::getTTL);
	}

	/**
	 * Refreshes an etcd lease once: a call of its own, since etcd has no call that
	 * refreshes several. jetcd opens a keep-alive stream for it and sends the request
	 * twice (again as it closes the stream), so etcd counts one call and two messages,
	 * and refreshes the lease a second time a round trip later: the lease outlives the
	 * holder's belief by that much more, which only delays the next holder.
	 * @return the lease's TTL after the refresh, or -1 when it is gone
	 */
	CompletableFuture<Long> keepAlive(long leaseId) {
		if (leaseId == 0) {
			return CompletableFuture.completedFuture(-1L);
		}
		// jetcd reports a lease that is gone as a failed keep-alive.
		return this.leases.keepAliveOnce(leaseId)
			.handle((response, ex) -> (ex == null) ? response.getTTL() : ifGone(ex, -1L));
	}

	/**
	 * Ends an etcd lease, and with it the keys attached to it.
	 * @return whether it ended now; {@code false} when it was already gone
	 */
	CompletableFuture<Boolean> revoke(long leaseId) {
		return this.leases.revoke(leaseId).handle((response, ex) -> (ex == null) || ifGone(ex, false));
	}

	/**
	 * The answer for a lease that is gone, if that is what the failure says (etcd's
	 * {@code requested lease not found}); otherwise the failure, thrown again.
	 */
	private static <T> T ifGone(Throwable ex, T gone) {
		Throwable cause = (ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex;
		if (isGone(cause)) {
			return gone;
		}
		throw new CompletionException(cause);
	}

	/**
	 * Whether a failure, or one of its causes, is etcd's answer to a request on a lease
	 * that is gone ({@code requested lease not found}), such as a key written on it.
	 */
	static boolean isGone(@Nullable Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (String.valueOf(cause.getMessage()).toLowerCase(Locale.ROOT).contains("not found")) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Ends an etcd lease without waiting: one left behind ends with its TTL anyway.
	 */
	void revokeQuietly(long leaseId) {
		if (leaseId != 0) {
			this.leases.revoke(leaseId).exceptionally((ex) -> null);
		}
	}

	/**
	 * Asks, without waiting, the time left on no lease and a keep-alive of none: it warms
	 * up the calls an acquire makes.
	 */
	void warmUp() {
		this.leases.timeToLive(0, LeaseOption.DEFAULT).exceptionally((ex) -> null);
		this.leases.keepAliveOnce(0).exceptionally((ex) -> null);
	}

}
