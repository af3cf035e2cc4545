package io.github.leaderelection.memory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;

import io.github.leaderelection.RunRecord;
import io.github.leaderelection.spi.AdminLeaseStore;
import io.github.leaderelection.spi.BatchLeaseStore;
import io.github.leaderelection.spi.Batches;
import io.github.leaderelection.spi.CandidateListStore;
import io.github.leaderelection.spi.ChangeFeedStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.RunRecordStore;

import org.jspecify.annotations.Nullable;

/**
 * A lease store held in this JVM's memory: for tests and local runs of a single process,
 * where every candidate shares one instance. It pushes every change to its watchers, like
 * the stores that can.
 */
public class InMemoryLeaseStore
		implements BatchLeaseStore, CandidateListStore, ChangeFeedStore, AdminLeaseStore, RunRecordStore {

	private final Map<String, Row> rows = new ConcurrentHashMap<>();

	/**
	 * The last run of each job, by group and job; written while its group's row is
	 * locked.
	 */
	private final Map<List<String>, RunRecord> runs = new ConcurrentHashMap<>();

	private final AtomicLong versions = new AtomicLong();

	private final Map<String, List<Runnable>> watchers = new ConcurrentHashMap<>();

	/** Live candidates: weight and the end of their entry on the store's clock. */
	private final Map<String, long[]> candidates = new ConcurrentHashMap<>();

	private final LongSupplier nanoClock;

	public InMemoryLeaseStore() {
		this(System::nanoTime);
	}

	/**
	 * Creates a store whose lease clock is the given nanosecond source (the store's own
	 * clock, independent of the candidates').
	 */
	public InMemoryLeaseStore(LongSupplier nanoClock) {
		this.nanoClock = nanoClock;
	}

	@Override
	public Optional<Lease> read(String group, Duration timeout) {
		Row row = this.rows.get(group);
		return (row != null) ? Optional.of(row.toLease(group, this.nanoClock.getAsLong())) : Optional.empty();
	}

	@Override
	public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
		long now = this.nanoClock.getAsLong();
		Row[] taken = new Row[1];
		this.rows.compute(group, (key, row) -> {
			if (row != null && !row.toLease(key, now).isAcquirableBy(candidateId)) {
				return row;
			}
			long term = (row != null) ? row.term + 1 : 1;
			long activeFrom = (row != null) ? Math.max(row.leaseEnd, now) : now;
			taken[0] = row(candidateId, term, activeFrom, now + leaseDuration.toNanos());
			return taken[0];
		});
		if (taken[0] == null) {
			return Optional.empty();
		}
		notifyWatchers(group);
		return Optional.of(taken[0].toLease(group, now));
	}

	@Override
	public Optional<Lease> renew(Lease lease, Duration leaseDuration, Duration timeout) {
		return renew(lease, leaseDuration, this.nanoClock.getAsLong());
	}

	/** One request: every lease is judged, and extended, at the same instant. */
	@Override
	public Map<String, Lease> tryAcquireAll(Collection<String> groups, String candidateId, Duration leaseDuration,
			Duration timeout) {
		return Batches.tryAcquireEach(this, groups, candidateId, leaseDuration, timeout);
	}

	@Override
	public Map<String, Lease> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout) {
		long now = this.nanoClock.getAsLong();
		Map<String, Lease> renewed = new LinkedHashMap<>();
		for (Lease lease : leases) {
			renew(lease, leaseDuration, now).ifPresent((extended) -> renewed.put(lease.group(), extended));
		}
		return renewed;
	}

	/** One request: every group is read at the same instant. */
	@Override
	public Map<String, Lease> readAll(Collection<String> groups, Duration timeout) {
		long now = this.nanoClock.getAsLong();
		Map<String, Lease> leases = new LinkedHashMap<>();
		for (String group : groups) {
			Row row = this.rows.get(group);
			if (row != null) {
				leases.put(group, row.toLease(group, now));
			}
		}
		return leases;
	}

	@Override
	public Optional<RunRecord> lastRun(String group, String job, Duration timeout) {
		return Optional.ofNullable(this.runs.get(List.of(group, job)));
	}

	@Override
	public List<RunRecord> runs(String group, Duration timeout) {
		return this.runs.values()
			.stream()
			.filter((run) -> run.group().equals(group))
			.sorted(Comparator.comparing(RunRecord::job))
			.toList();
	}

	@Override
	public boolean claimRun(Lease lease, RunRecord run, Duration minInterval, Duration timeout) {
		if (!RunRecordStore.isClaimedUnder(lease, run)) {
			return false;
		}
		long now = this.nanoClock.getAsLong();
		boolean[] claimed = new boolean[1];
		this.rows.computeIfPresent(lease.group(), (group, row) -> {
			if (row.isHeld(lease) && row.leaseEnd - now > 0) {
				claimed[0] = this.runs.compute(List.of(group, run.job()),
						(key, last) -> run.mayFollow(last, minInterval) ? run : last) == run;
			}
			return row;
		});
		return claimed[0];
	}

	@Override
	public boolean finishRun(RunRecord ended, Duration timeout) {
		RunRecord written = this.runs.computeIfPresent(List.of(ended.group(), ended.job()),
				(key, last) -> last.isSameRunAs(ended) ? ended : last);
		return written == ended;
	}

	private Optional<Lease> renew(Lease lease, Duration leaseDuration, long now) {
		Row[] renewed = new Row[1];
		this.rows.computeIfPresent(lease.group(), (key, row) -> {
			if (!row.isHeld(lease)) {
				return row;
			}
			// A renewal keeps the version: one whose answer was lost must not keep the
			// holder from releasing the lease it still holds.
			renewed[0] = new Row(row.holder, row.term, row.activeFrom, now + leaseDuration.toNanos(), row.version);
			return renewed[0];
		});
		return Optional.ofNullable(renewed[0]).map((row) -> row.toLease(lease.group(), now));
	}

	@Override
	public void release(Lease lease, Duration timeout) {
		long now = this.nanoClock.getAsLong();
		boolean[] released = new boolean[1];
		this.rows.computeIfPresent(lease.group(), (key, row) -> {
			if (!row.isHeld(lease)) {
				return row;
			}
			released[0] = true;
			// Never before activeFrom: a holder still waiting out an earlier one passes
			// the wait on.
			return row(null, row.term, row.activeFrom, Math.max(Math.min(row.leaseEnd, now), row.activeFrom));
		});
		if (released[0]) {
			notifyWatchers(lease.group());
		}
	}

	@Override
	public void forceLeader(String group, String candidateId, Duration timeout) {
		long now = this.nanoClock.getAsLong();
		this.rows.compute(group, (key, row) -> {
			if (row == null) {
				return row(candidateId, 0, now, now);
			}
			if (candidateId.equals(row.holder)) {
				return row;
			}
			return row(candidateId, row.term + 1, row.activeFrom, Math.max(row.leaseEnd, now));
		});
		notifyWatchers(group);
	}

	@Override
	public void clear(String group, Duration timeout) {
		this.rows.computeIfPresent(group, (key, row) -> row(null, row.term, row.activeFrom, row.leaseEnd));
		notifyWatchers(group);
	}

	@Override
	public Map<String, Integer> keepCandidateAlive(String candidateId, int weight, Duration ttl, Duration timeout) {
		long now = this.nanoClock.getAsLong();
		this.candidates.put(candidateId, new long[] { weight, now + ttl.toNanos() });
		Map<String, Integer> live = new TreeMap<>();
		this.candidates.forEach((id, entry) -> {
			if (entry[1] - now > 0) {
				live.put(id, (int) entry[0]);
			}
		});
		return live;
	}

	@Override
	public void removeCandidate(String candidateId, Duration timeout) {
		this.candidates.remove(candidateId);
	}

	@Override
	public AutoCloseable watch(String group, Runnable onChange) {
		List<Runnable> groupWatchers = this.watchers.computeIfAbsent(group, (key) -> new CopyOnWriteArrayList<>());
		groupWatchers.add(onChange);
		return () -> groupWatchers.remove(onChange);
	}

	@Override
	public String backend() {
		return "in-memory";
	}

	private void notifyWatchers(String group) {
		for (Runnable watcher : new ArrayList<>(this.watchers.getOrDefault(group, List.of()))) {
			watcher.run();
		}
	}

	/**
	 * A row as granted, released, forced or cleared now: each such write gives it a new
	 * version, which renew and release compare, as on the stores that compare a version
	 * of their own.
	 */
	private Row row(@Nullable String holder, long term, long activeFrom, long leaseEnd) {
		return new Row(holder, term, activeFrom, leaseEnd, this.versions.incrementAndGet());
	}

	private record Row(@Nullable String holder, long term, long activeFrom, long leaseEnd, long version) {

		boolean isHeld(Lease lease) {
			return lease.holder() != null && lease.holder().equals(this.holder) && lease.term() == this.term
					&& lease.version() == this.version;
		}

		Lease toLease(String group, long now) {
			return new Lease(group, this.holder, this.term, Duration.ofNanos(this.leaseEnd - now),
					Duration.ofNanos(Math.max(0, this.activeFrom - now)), this.version);
		}

	}

}
