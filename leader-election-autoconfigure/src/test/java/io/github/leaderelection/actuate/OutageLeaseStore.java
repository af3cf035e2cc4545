package io.github.leaderelection.actuate;

import java.time.Duration;
import java.util.Optional;

import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import io.github.leaderelection.spi.LeaseStore;

/**
 * An in-memory store whose every call fails while the test cuts it off, as a store outage
 * would.
 */
public class OutageLeaseStore extends ForwardingLeaseStore {

	private volatile boolean down;

	public OutageLeaseStore() {
		super(new InMemoryLeaseStore());
	}

	/** Makes every call fail until {@link #restore()}. */
	public void cutOff() {
		this.down = true;
	}

	public void restore() {
		this.down = false;
	}

	private void check() {
		if (this.down) {
			throw new IllegalStateException("store unavailable (injected)");
		}
	}

	@Override
	public Optional<Lease> read(String group, Duration timeout) {
		check();
		return delegate().read(group, timeout);
	}

	@Override
	public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
		check();
		return delegate().tryAcquire(group, candidateId, leaseDuration, timeout);
	}

	@Override
	public boolean renew(Lease lease, Duration leaseDuration, Duration timeout) {
		check();
		return delegate().renew(lease, leaseDuration, timeout);
	}

	@Override
	public void release(Lease lease, Duration timeout) {
		check();
		delegate().release(lease, timeout);
	}

	@Override
	public void forceLeader(String group, String candidateId, Duration timeout) {
		check();
		delegate().forceLeader(group, candidateId, timeout);
	}

	@Override
	public void clear(String group, Duration timeout) {
		check();
		delegate().clear(group, timeout);
	}

	@Override
	public String backend() {
		return "outage-test";
	}

}
