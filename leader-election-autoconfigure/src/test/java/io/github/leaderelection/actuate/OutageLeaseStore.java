package io.github.leaderelection.actuate;

import java.time.Duration;
import java.util.Optional;

import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;

/**
 * An in-memory store whose every call fails while the test cuts it off, as a store outage
 * would.
 */
public class OutageLeaseStore implements LeaseStore {

	private final LeaseStore delegate = new InMemoryLeaseStore();

	private volatile boolean down;

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
		return this.delegate.read(group, timeout);
	}

	@Override
	public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
		check();
		return this.delegate.tryAcquire(group, candidateId, leaseDuration, timeout);
	}

	@Override
	public boolean renew(Lease lease, Duration leaseDuration, Duration timeout) {
		check();
		return this.delegate.renew(lease, leaseDuration, timeout);
	}

	@Override
	public void release(Lease lease, Duration timeout) {
		check();
		this.delegate.release(lease, timeout);
	}

	@Override
	public void forceLeader(String group, String candidateId, Duration timeout) {
		check();
		this.delegate.forceLeader(group, candidateId, timeout);
	}

	@Override
	public void clear(String group, Duration timeout) {
		check();
		this.delegate.clear(group, timeout);
	}

	@Override
	public AutoCloseable watch(String group, Runnable onChange) {
		return this.delegate.watch(group, onChange);
	}

	@Override
	public String backend() {
		return "outage-test";
	}

}
