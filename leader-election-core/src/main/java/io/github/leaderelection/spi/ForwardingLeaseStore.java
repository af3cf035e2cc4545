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
 */
public abstract class ForwardingLeaseStore implements LeaseStore {

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
	public boolean renew(Lease lease, Duration leaseDuration, Duration timeout) {
		return this.delegate.renew(lease, leaseDuration, timeout);
	}

	@Override
	public Map<String, Lease> tryAcquireAll(Collection<String> groups, String candidateId, Duration leaseDuration,
			Duration timeout) {
		return this.delegate.tryAcquireAll(groups, candidateId, leaseDuration, timeout);
	}

	@Override
	public Set<String> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout) {
		return this.delegate.renewAll(leases, leaseDuration, timeout);
	}

	@Override
	public Map<String, Lease> readAll(Collection<String> groups, Duration timeout) {
		return this.delegate.readAll(groups, timeout);
	}

	@Override
	public Map<String, Integer> keepCandidateAlive(String candidateId, int weight, Duration ttl, Duration timeout) {
		return this.delegate.keepCandidateAlive(candidateId, weight, ttl, timeout);
	}

	@Override
	public void removeCandidate(String candidateId, Duration timeout) {
		this.delegate.removeCandidate(candidateId, timeout);
	}

	@Override
	public void release(Lease lease, Duration timeout) {
		this.delegate.release(lease, timeout);
	}

	@Override
	public void forceLeader(String group, String candidateId, Duration timeout) {
		this.delegate.forceLeader(group, candidateId, timeout);
	}

	@Override
	public void clear(String group, Duration timeout) {
		this.delegate.clear(group, timeout);
	}

	@Override
	public AutoCloseable watch(String group, Runnable onChange) {
		return this.delegate.watch(group, onChange);
	}

	@Override
	public void join(String group, String candidateId, Duration timeout) {
		this.delegate.join(group, candidateId, timeout);
	}

	@Override
	public void leave(String group, String candidateId, Duration timeout) {
		this.delegate.leave(group, candidateId, timeout);
	}

	@Override
	public String backend() {
		return this.delegate.backend();
	}

	@Override
	public void close() {
		this.delegate.close();
	}

}
