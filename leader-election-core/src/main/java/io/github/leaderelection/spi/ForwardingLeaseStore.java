package io.github.leaderelection.spi;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A {@link LeaseStore} that passes every call to another one: the base of decorators that
 * count, time, record or disturb a store's calls. A subclass overrides the calls it
 * changes and leaves the rest to the store it wraps, so that a call added to the SPI
 * later reaches that store too.
 *
 * <p>
 * It declares every capability. For one the wrapped store lacks, it does what the engine
 * does without it: batches go {@linkplain Batches one group after another}, a watch is
 * never told of a change, a join or leave does nothing; the candidate list and the
 * operator's calls fail.
 */
public abstract class ForwardingLeaseStore
		implements BatchLeaseStore, CandidateListStore, ChangeFeedStore, AdminLeaseStore {

	private final LeaseStore delegate;

	/**
	 * Wraps a store.
	 * @param delegate the store that answers the calls
	 */
	protected ForwardingLeaseStore(LeaseStore delegate) {
		this.delegate = Objects.requireNonNull(delegate, "delegate");
	}

	/**
	 * The store this one passes its calls to.
	 * @return the wrapped store
	 */
	protected LeaseStore delegate() {
		return this.delegate;
	}

	@Override
	public Optional<Lease> read(String group, Duration timeout) {
		return this.delegate.read(group, timeout);
	}

	@Override
	public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
		return this.delegate.tryAcquire(group, candidateId, leaseDuration, timeout);
	}

	@Override
	public Optional<Lease> renew(Lease lease, Duration leaseDuration, Duration timeout) {
		return this.delegate.renew(lease, leaseDuration, timeout);
	}

	@Override
	public Map<String, Lease> tryAcquireAll(Collection<String> groups, String candidateId, Duration leaseDuration,
			Duration timeout) {
		return Batches.tryAcquireAll(this.delegate, groups, candidateId, leaseDuration, timeout);
	}

	@Override
	public Map<String, Lease> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout) {
		return Batches.renewAll(this.delegate, leases, leaseDuration, timeout);
	}

	@Override
	public Map<String, Lease> readAll(Collection<String> groups, Duration timeout) {
		return Batches.readAll(this.delegate, groups, timeout);
	}

	@Override
	public Map<String, Integer> keepCandidateAlive(String candidateId, int weight, Duration ttl, Duration timeout) {
		return as(CandidateListStore.class, "list live candidates").keepCandidateAlive(candidateId, weight, ttl,
				timeout);
	}

	@Override
	public void removeCandidate(String candidateId, Duration timeout) {
		if (this.delegate instanceof CandidateListStore candidates) {
			candidates.removeCandidate(candidateId, timeout);
		}
	}

	@Override
	public void release(Lease lease, Duration timeout) {
		this.delegate.release(lease, timeout);
	}

	@Override
	public void forceLeader(String group, String candidateId, Duration timeout) {
		as(AdminLeaseStore.class, "force a leader").forceLeader(group, candidateId, timeout);
	}

	@Override
	public void clear(String group, Duration timeout) {
		as(AdminLeaseStore.class, "clear a lease").clear(group, timeout);
	}

	@Override
	public AutoCloseable watch(String group, Runnable onChange) {
		return (this.delegate instanceof ChangeFeedStore feed) ? feed.watch(group, onChange) : () -> {
		};
	}

	@Override
	public void join(String group, String candidateId, Duration timeout) {
		if (this.delegate instanceof ChangeFeedStore feed) {
			feed.join(group, candidateId, timeout);
		}
	}

	@Override
	public void leave(String group, String candidateId, Duration timeout) {
		if (this.delegate instanceof ChangeFeedStore feed) {
			feed.leave(group, candidateId, timeout);
		}
	}

	@Override
	public String backend() {
		return this.delegate.backend();
	}

	@Override
	public void close() {
		this.delegate.close();
	}

	private <T extends LeaseStore> T as(Class<T> capability, String what) {
		if (capability.isInstance(this.delegate)) {
			return capability.cast(this.delegate);
		}
		throw new UnsupportedOperationException("The " + this.delegate.backend() + " store cannot " + what);
	}

}
