package io.github.leaderelection.chaos;

import java.time.Duration;
import java.util.Optional;

import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;

/**
 * A lease store that records when each acquire and renew started and how it ended, so
 * that the checker can bound every belief without trusting the node: the engine counts a
 * leader's deadline from a moment no later than the start of its last successful acquire
 * or renew, and grants only after an acquire returned.
 *
 * <p>
 * A renewal's start is written before the call, so a renewal whose outcome never made it
 * to the log (the node was killed during it) still counts as one that may have succeeded.
 */
final class RecordingLeaseStore implements LeaseStore {

	private final LeaseStore delegate;

	private final EventLog log;

	RecordingLeaseStore(LeaseStore delegate, EventLog log) {
		this.delegate = delegate;
		this.log = log;
	}

	@Override
	public Optional<Lease> read(String group, Duration timeout) {
		return this.delegate.read(group, timeout);
	}

	@Override
	public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
		long entry = EventLog.now();
		Optional<Lease> taken;
		try {
			taken = this.delegate.tryAcquire(group, candidateId, leaseDuration, timeout);
		}
		catch (RuntimeException ex) {
			this.log.write("acquire", entry, EventLog.now(), "error", 0, 0);
			throw ex;
		}
		long exit = EventLog.now();
		if (taken.isPresent()) {
			this.log.write("acquire", entry, exit, "taken", taken.get().term(), taken.get().activeIn().toNanos());
		}
		else {
			this.log.write("acquire", entry, exit, "empty", 0, 0);
		}
		return taken;
	}

	@Override
	public boolean renew(Lease lease, Duration leaseDuration, Duration timeout) {
		long entry = EventLog.now();
		this.log.write("renew-start", entry, lease.term());
		boolean renewed;
		try {
			renewed = this.delegate.renew(lease, leaseDuration, timeout);
		}
		catch (RuntimeException ex) {
			this.log.write("renew-end", entry, EventLog.now(), lease.term(), "error");
			throw ex;
		}
		this.log.write("renew-end", entry, EventLog.now(), lease.term(), renewed);
		return renewed;
	}

	@Override
	public void release(Lease lease, Duration timeout) {
		// The engine releases only a lease it no longer acts on: its belief is over by
		// now.
		this.log.write("release", EventLog.now(), lease.term());
		this.delegate.release(lease, timeout);
		this.log.write("release-end", EventLog.now(), lease.term());
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
	public String backend() {
		return this.delegate.backend();
	}

}
