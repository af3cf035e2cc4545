package io.github.leaderelection.benchmarks;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import io.github.leaderelection.spi.LeaseStore;

/**
 * Counts the calls the engine makes to a store (a batch counts once), to set beside what
 * the store's server counts.
 */
final class CountingLeaseStore extends ForwardingLeaseStore {

	final LongAdder calls = new LongAdder();

	/** Calls by method, and calls that threw by method (as {@code method!}). */
	final Map<String, LongAdder> byMethod = new ConcurrentSkipListMap<>();

	/** Time spent in calls by method, in nanoseconds. */
	final Map<String, LongAdder> nanosByMethod = new ConcurrentSkipListMap<>();

	private final Participant.Events events;

	/**
	 * @param events told of each call as it ends
	 */
	CountingLeaseStore(LeaseStore delegate, Participant.Events events) {
		super(delegate);
		this.events = events;
	}

	private <T> T count(String method, Supplier<T> call) {
		this.calls.increment();
		this.byMethod.computeIfAbsent(method, (m) -> new LongAdder()).increment();
		long start = System.nanoTime();
		try {
			return call.get();
		}
		catch (RuntimeException ex) {
			this.byMethod.computeIfAbsent(method + "!", (m) -> new LongAdder()).increment();
			throw ex;
		}
		finally {
			long end = System.nanoTime();
			this.nanosByMethod.computeIfAbsent(method, (m) -> new LongAdder()).add(end - start);
			this.events.called(method, start, end);
		}
	}

	/**
	 * {@code method:calls:milliseconds spent;...}, failures as {@code method!:calls}.
	 */
	String byMethod() {
		StringBuilder text = new StringBuilder();
		this.byMethod.forEach((method, count) -> {
			text.append(method).append(':').append(count.sum());
			LongAdder nanos = this.nanosByMethod.get(method);
			if (nanos != null) {
				text.append(':').append(nanos.sum() / 1_000_000);
			}
			text.append(';');
		});
		return text.toString();
	}

	@Override
	public Optional<Lease> read(String group, Duration timeout) {
		return count("read", () -> delegate().read(group, timeout));
	}

	@Override
	public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
		return count("tryAcquire", () -> delegate().tryAcquire(group, candidateId, leaseDuration, timeout));
	}

	@Override
	public Optional<Lease> renew(Lease lease, Duration leaseDuration, Duration timeout) {
		return count("renew", () -> delegate().renew(lease, leaseDuration, timeout));
	}

	@Override
	public Map<String, Lease> tryAcquireAll(Collection<String> groups, String candidateId, Duration leaseDuration,
			Duration timeout) {
		return count("tryAcquireAll", () -> super.tryAcquireAll(groups, candidateId, leaseDuration, timeout));
	}

	@Override
	public Map<String, Lease> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout) {
		return count("renewAll", () -> super.renewAll(leases, leaseDuration, timeout));
	}

	@Override
	public Map<String, Lease> readAll(Collection<String> groups, Duration timeout) {
		return count("readAll", () -> super.readAll(groups, timeout));
	}

	@Override
	public Map<String, Integer> keepCandidateAlive(String candidateId, int weight, Duration ttl, Duration timeout) {
		return count("keepCandidateAlive", () -> super.keepCandidateAlive(candidateId, weight, ttl, timeout));
	}

	@Override
	public void removeCandidate(String candidateId, Duration timeout) {
		count("removeCandidate", () -> {
			super.removeCandidate(candidateId, timeout);
			return null;
		});
	}

	@Override
	public void leave(String group, String candidateId, Duration timeout) {
		count("leave", () -> {
			super.leave(group, candidateId, timeout);
			return null;
		});
	}

	/**
	 * Counted so that the steady state of the scale benchmark begins once the joins of a
	 * start are over: on ZooKeeper each costs requests.
	 */
	@Override
	public void join(String group, String candidateId, Duration timeout) {
		count("join", () -> {
			super.join(group, candidateId, timeout);
			return null;
		});
	}

	@Override
	public void release(Lease lease, Duration timeout) {
		count("release", () -> {
			delegate().release(lease, timeout);
			return null;
		});
	}

	@Override
	public void forceLeader(String group, String candidateId, Duration timeout) {
		count("forceLeader", () -> {
			super.forceLeader(group, candidateId, timeout);
			return null;
		});
	}

	@Override
	public void clear(String group, Duration timeout) {
		count("clear", () -> {
			super.clear(group, timeout);
			return null;
		});
	}

}
