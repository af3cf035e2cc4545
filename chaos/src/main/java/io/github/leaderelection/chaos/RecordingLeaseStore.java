package io.github.leaderelection.chaos;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import io.github.leaderelection.spi.BatchCutShortException;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.spi.RunRecordStore;
import io.github.leaderelection.RunRecord;
import org.jspecify.annotations.Nullable;

/**
 * A lease store that records when each acquire and renew started and how it ended
 * (renewals in a batch each on their own, all with the batch's start), each with its
 * group, so that the checker can bound every belief without trusting the node: the engine
 * counts a leader's deadline from a moment no later than the start of its last successful
 * acquire or renew, and grants only after an acquire returned.
 *
 * <p>
 * A renewal's start is written before the call, so a renewal whose outcome never made it
 * to the log (the node was killed during it) still counts as one that may have succeeded.
 *
 * <p>
 * The engine gives a group run records only when its store is a {@link RunRecordStore}, a
 * capability a forwarding store does not have of itself: {@link #of} keeps it when the
 * store it records has it, so that the nodes' leader-only job claims its ticks in the
 * store they elect through.
 */
class RecordingLeaseStore extends ForwardingLeaseStore {

	private final EventLog log;

	private RecordingLeaseStore(LeaseStore delegate, EventLog log) {
		super(delegate);
		this.log = log;
	}

	/**
	 * A recording store in front of {@code delegate}, which keeps run records if
	 * {@code delegate} does.
	 */
	static RecordingLeaseStore of(LeaseStore delegate, EventLog log) {
		return (delegate instanceof RunRecordStore runs) ? new WithRunRecords(delegate, runs, log)
				: new RecordingLeaseStore(delegate, log);
	}

	@Override
	public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
		long entry = EventLog.now();
		Optional<Lease> taken;
		try {
			taken = delegate().tryAcquire(group, candidateId, leaseDuration, timeout);
		}
		catch (RuntimeException ex) {
			this.log.write("acquire", entry, EventLog.now(), "error", 0, 0, group);
			throw ex;
		}
		long exit = EventLog.now();
		if (taken.isPresent()) {
			this.log.write("acquire", entry, exit, "taken", taken.get().term(), taken.get().activeIn().toNanos(),
					group);
		}
		else {
			this.log.write("acquire", entry, exit, "empty", 0, 0, group);
		}
		return taken;
	}

	/**
	 * Records a round's acquisition as the acquisition of each of its groups, all started
	 * at the round's start.
	 */
	@Override
	public Map<String, Lease> tryAcquireAll(Collection<String> groups, String candidateId, Duration leaseDuration,
			Duration timeout) {
		long entry = EventLog.now();
		Map<String, Lease> taken;
		try {
			taken = super.tryAcquireAll(groups, candidateId, leaseDuration, timeout);
		}
		catch (BatchCutShortException ex) {
			// What it took is acted on: recorded as taken, the groups it did not reach as
			// failed.
			recordAcquisitions(groups, ex.leases(), ex.answered(), entry);
			throw ex;
		}
		catch (RuntimeException ex) {
			long exit = EventLog.now();
			groups.forEach((group) -> this.log.write("acquire", entry, exit, "error", 0, 0, group));
			throw ex;
		}
		recordAcquisitions(groups, taken, null, entry);
		return taken;
	}

	private void recordAcquisitions(Collection<String> groups, Map<String, Lease> taken, @Nullable Set<String> answered,
			long entry) {
		long exit = EventLog.now();
		for (String group : groups) {
			Lease lease = taken.get(group);
			if (lease != null) {
				this.log.write("acquire", entry, exit, "taken", lease.term(), lease.activeIn().toNanos(), group);
			}
			else if (answered == null || answered.contains(group)) {
				this.log.write("acquire", entry, exit, "empty", 0, 0, group);
			}
			else {
				this.log.write("acquire", entry, exit, "error", 0, 0, group);
			}
		}
	}

	@Override
	public Optional<Lease> renew(Lease lease, Duration leaseDuration, Duration timeout) {
		long entry = EventLog.now();
		this.log.write("renew-start", entry, lease.term(), lease.group());
		Optional<Lease> renewed;
		try {
			renewed = delegate().renew(lease, leaseDuration, timeout);
		}
		catch (RuntimeException ex) {
			this.log.write("renew-end", entry, EventLog.now(), lease.term(), "error", lease.group());
			throw ex;
		}
		this.log.write("renew-end", entry, EventLog.now(), lease.term(), renewed.isPresent(), lease.group());
		return renewed;
	}

	/**
	 * Records a round's renewal as the renewal of each of its leases, all started at the
	 * round's start.
	 */
	@Override
	public Map<String, Lease> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout) {
		long entry = EventLog.now();
		leases.forEach((lease) -> this.log.write("renew-start", entry, lease.term(), lease.group()));
		Map<String, Lease> renewed;
		try {
			renewed = super.renewAll(leases, leaseDuration, timeout);
		}
		catch (BatchCutShortException ex) {
			long exit = EventLog.now();
			leases.forEach((lease) -> this.log.write("renew-end", entry, exit, lease.term(),
					ex.answered().contains(lease.group()) ? ex.leases().containsKey(lease.group()) : "error",
					lease.group()));
			throw ex;
		}
		catch (RuntimeException ex) {
			long exit = EventLog.now();
			leases.forEach((lease) -> this.log.write("renew-end", entry, exit, lease.term(), "error", lease.group()));
			throw ex;
		}
		long exit = EventLog.now();
		leases.forEach((lease) -> this.log.write("renew-end", entry, exit, lease.term(),
				renewed.containsKey(lease.group()), lease.group()));
		return renewed;
	}

	@Override
	public void release(Lease lease, Duration timeout) {
		// The engine releases only a lease it no longer acts on: its belief is over by
		// now.
		this.log.write("release", EventLog.now(), lease.term(), lease.group());
		delegate().release(lease, timeout);
		this.log.write("release-end", EventLog.now(), lease.term(), lease.group());
	}

	/**
	 * A recording store whose store keeps run records: their calls go to it unchanged.
	 */
	private static final class WithRunRecords extends RecordingLeaseStore implements RunRecordStore {

		private final RunRecordStore runs;

		private WithRunRecords(LeaseStore delegate, RunRecordStore runs, EventLog log) {
			super(delegate, log);
			this.runs = runs;
		}

		@Override
		public Optional<RunRecord> lastRun(String group, String job, Duration timeout) {
			return this.runs.lastRun(group, job, timeout);
		}

		@Override
		public List<RunRecord> runs(String group, Duration timeout) {
			return this.runs.runs(group, timeout);
		}

		@Override
		public boolean claimRun(Lease lease, RunRecord run, Duration minInterval, Duration timeout) {
			return this.runs.claimRun(lease, run, minInterval, timeout);
		}

		@Override
		public boolean finishRun(RunRecord ended, Duration timeout) {
			return this.runs.finishRun(ended, timeout);
		}

	}

}
