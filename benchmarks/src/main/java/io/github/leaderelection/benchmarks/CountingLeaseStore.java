package io.github.leaderelection.benchmarks;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;

import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import io.github.leaderelection.spi.LeaseStore;

/**
 * Counts the calls the engine makes to a store (a batch counts once), to set beside what
 * the store's server counts.
 */
final class CountingLeaseStore extends ForwardingLeaseStore {

	final LongAdder calls = new LongAdder();

	CountingLeaseStore(LeaseStore delegate) {
		super(delegate);
	}

	@Override
	public Optional<Lease> read(String group, Duration timeout) {
		this.calls.increment();
		return delegate().read(group, timeout);
	}

	@Override
	public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
		this.calls.increment();
		return delegate().tryAcquire(group, candidateId, leaseDuration, timeout);
	}

	@Override
	public boolean renew(Lease lease, Duration leaseDuration, Duration timeout) {
		this.calls.increment();
		return delegate().renew(lease, leaseDuration, timeout);
	}

	@Override
	public Set<String> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout) {
		this.calls.increment();
		return delegate().renewAll(leases, leaseDuration, timeout);
	}

	@Override
	public Map<String, Lease> readAll(Collection<String> groups, Duration timeout) {
		this.calls.increment();
		return delegate().readAll(groups, timeout);
	}

	@Override
	public void release(Lease lease, Duration timeout) {
		this.calls.increment();
		delegate().release(lease, timeout);
	}

	@Override
	public void forceLeader(String group, String candidateId, Duration timeout) {
		this.calls.increment();
		delegate().forceLeader(group, candidateId, timeout);
	}

	@Override
	public void clear(String group, Duration timeout) {
		this.calls.increment();
		delegate().clear(group, timeout);
	}

}
