package io.github.leaderelection.etcd;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link LeaseStore} on etcd v3, through jetcd. Each group has two keys under the
 * namespace:
 * <ul>
 * <li>{@code <namespace>/groups/<group>/record}: the group's record (term, holder, the
 * etcd lease that backs the holder's lease and the candidate it was granted to, and an
 * earlier holder's etcd lease that a new holder still waits out). It is never deleted, so
 * terms survive releases and re-elections;</li>
 * <li>{@code <namespace>/groups/<group>/lease}: a key attached to the holder's etcd
 * lease, which etcd deletes when the lease expires: followers watching the group hear of
 * it at once.</li>
 * </ul>
 * Expiry is judged by etcd alone: a lease lives as long as its etcd lease, whose TTL is
 * the lease duration rounded up to whole seconds (etcd counts TTLs in seconds). etcd may
 * extend a lease when its own leader changes, never shorten it; a holder's belief ends at
 * its renew deadline whatever etcd does, so a lease that outlives its TTL only delays the
 * next holder. Remaining times read from etcd are rounded up by a second, so that a new
 * holder waits out an old lease too long rather than too short.
 *
 * <p>
 * Every write is a transaction compared on the record's revision: a holder that lost its
 * lease cannot renew or release the new holder's. Terms are counted in the record; after
 * a wiped or restored etcd, this store still hands out terms above those it saw itself
 * (it remembers the highest term per group), and a grant on a record that is missing or
 * older than what it saw waits one lease duration before the holder acts, since the
 * holder of the lost term may still believe; as the Redis store does.
 *
 * <p>
 * The live candidates that balancing reads are keys under
 * {@code <namespace>/candidates/}, each attached to an etcd lease of its candidate's own
 * (see {@link EtcdCandidates}).
 *
 * <p>
 * The store uses the {@link Client} it is given and never closes it.
 */
public class EtcdLeaseStore implements LeaseStore {

	private static final Logger logger = LoggerFactory.getLogger(EtcdLeaseStore.class);

	/** The namespace used when none is given. */
	public static final String DEFAULT_NAMESPACE = "leader-election";

	static final String NAMESPACE_PATTERN = "^[A-Za-z][A-Za-z0-9_.]*(-[A-Za-z0-9_.]+)*(/[A-Za-z][A-Za-z0-9_.]*(-[A-Za-z0-9_.]+)*)*$";

	private static final Pattern NAMESPACE = Pattern.compile(NAMESPACE_PATTERN);

	private static final int NAMESPACE_MAX_LENGTH = 200;

	private static final GetOption PREFIX = GetOption.builder().isPrefix(true).build();

	private final Client client;

	private final String namespace;

	private final EtcdLeases leases;

	private final EtcdCandidates candidates;

	private final AtomicBoolean warmedUp = new AtomicBoolean();

	/** The highest term this store saw per group: terms survive a wiped etcd. */
	private final Map<String, Long> seenTerms = new ConcurrentHashMap<>();

	public EtcdLeaseStore(Client client) {
		this(client, DEFAULT_NAMESPACE);
	}

	/**
	 * @param client the etcd client, which the store does not close
	 * @param namespace the first part of every key, such as {@code leader-election}
	 */
	public EtcdLeaseStore(Client client, String namespace) {
		this.client = Objects.requireNonNull(client, "client");
		this.namespace = requireValidNamespace(namespace);
		this.leases = new EtcdLeases(client);
		this.candidates = new EtcdCandidates(client.getKVClient(), this.leases, this.namespace);
	}

	private static String requireValidNamespace(String namespace) {
		Objects.requireNonNull(namespace, "namespace");
		if (namespace.length() > NAMESPACE_MAX_LENGTH || !NAMESPACE.matcher(namespace).matches()) {
			throw new IllegalArgumentException("Invalid etcd namespace '" + namespace + "': it must match "
					+ NAMESPACE_PATTERN + " and have at most " + NAMESPACE_MAX_LENGTH + " characters");
		}
		return namespace;
	}

	/**
	 * Reads the group's two keys in one request. The lease is live while its key exists
	 * (etcd deletes it with the etcd lease); the time left is reported as the etcd
	 * lease's whole TTL plus a second, an upper bound: the exact figure would cost a
	 * second request on every poll, and the engine only asks whether the lease is live.
	 */
	@Override
	public Optional<Lease> read(String group, Duration timeout) {
		return lease(group, state(new EtcdCall("read", group, timeout), group));
	}

	/**
	 * Reads the groups as {@link #read} reads one, each with a range read of its two
	 * keys, in read-only transactions of at most 128 (etcd's default
	 * {@code --max-txn-ops}, above which it refuses a transaction), sent at once: one
	 * request per 128 groups.
	 */
	@Override
	public Map<String, Lease> readAll(Collection<String> groups, Duration timeout) {
		List<String> distinct = List.copyOf(new LinkedHashSet<>(groups));
		EtcdCall call = EtcdCall.ofGroups("read", distinct.size(), timeout);
		List<GetResponse> responses = call.read(this.client.getKVClient(),
				distinct.stream().map((group) -> Op.get(groupPrefix(group), PREFIX)).toList());
		Map<String, Lease> leases = new LinkedHashMap<>();
		for (int i = 0; i < distinct.size(); i++) {
			String group = distinct.get(i);
			lease(group, state(group, responses.get(i))).ifPresent((lease) -> leases.put(group, lease));
		}
		return leases;
	}

	private Optional<Lease> lease(String group, GroupState state) {
		GroupRecord current = state.record();
		if (current == null) {
			return Optional.empty();
		}
		remember(group, current.term());
		Duration expiresIn = (state.liveTtl() >= 0) ? remaining(state.liveTtl()) : Duration.ZERO;
		return Optional.of(new Lease(group, current.holder(), current.term(), expiresIn, Duration.ZERO));
	}

	@Override
	public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
		EtcdCall call = new EtcdCall("acquire", group, timeout);
		GroupState state = state(call, group);
		Optional<GroupRecord> record = Optional.ofNullable(state.record());
		// etcd lost what this store saw (a wiped cluster, a restore from an older
		// snapshot): the holder of the lost term may still believe it leads.
		long seen = this.seenTerms.getOrDefault(group, 0L);
		boolean lost = record.map((current) -> current.term() < seen).orElse(seen > 0);
		long fenceId = 0;
		long fenceTtl = -1;
		if (record.isPresent()) {
			GroupRecord current = record.get();
			remember(group, current.term());
			boolean live = state.liveTtl() >= 0;
			if (live && current.holder() != null && !candidateId.equals(current.holder())) {
				return Optional.empty();
			}
			// The lease a new holder must wait out: another candidate's that has not
			// expired (forced or cleared away), or the one an earlier holder was still
			// waiting out. The other candidate may still renew it once (a renewal reads
			// the record, then refreshes the lease): the wait is its whole TTL.
			if (live && !candidateId.equals(current.leaseHolder())) {
				fenceId = current.leaseId();
				fenceTtl = state.liveTtl();
			}
			long earlierTtl = this.leases.timeToLive(call, current.fenceId());
			if (earlierTtl > fenceTtl) {
				fenceId = current.fenceId();
				fenceTtl = earlierTtl;
			}
		}
		long leaseId = call.await(this.leases.grant(leaseDuration));
		long term = nextTerm(group, record);
		GroupRecord next = new GroupRecord(term, leaseId, (fenceTtl >= 0) ? fenceId : 0, candidateId, candidateId, 0);
		long revision = call.await(write(group, record, next, leaseDuration));
		if (revision < 0) {
			this.leases.revokeQuietly(leaseId);
			return Optional.empty();
		}
		remember(group, term);
		record.filter((previous) -> candidateId.equals(previous.leaseHolder()) && previous.leaseId() != 0)
			.ifPresent((previous) -> this.leases.revokeQuietly(previous.leaseId()));
		Duration activeIn = (fenceTtl >= 0) ? remaining(fenceTtl) : Duration.ZERO;
		if (lost) {
			logger.warn(
					"The lease record of group '{}' in etcd is missing or older than term {}, which this instance "
							+ "saw: etcd lost data. The new holder waits one lease duration before it acts",
					group, seen);
			activeIn = max(activeIn, Duration.ofSeconds(ttlSeconds(leaseDuration)));
		}
		return Optional.of(new Lease(group, candidateId, term, leaseDuration, activeIn));
	}

	/**
	 * Reads the record, and if it still has this holder and term, refreshes the etcd
	 * lease: two requests. The refresh is sent only once the read answered, so a leader
	 * whose answers no longer arrive stops keeping its lease alive. A force or clear that
	 * lands between the two cannot be outlived by this renewal: a holder that takes over
	 * another's live lease waits its whole TTL.
	 */
	@Override
	public boolean renew(Lease lease, Duration leaseDuration, Duration timeout) {
		String group = lease.group();
		EtcdCall call = new EtcdCall("renew", group, timeout);
		Optional<GroupRecord> record = record(call, group);
		if (record.isEmpty() || !record.get().isHeldBy(lease)) {
			return false;
		}
		return call.await(refresh(call, group, record.get(), leaseDuration));
	}

	/**
	 * Renews as {@link #renew} does, each lease judged on its own: first the records, in
	 * read-only transactions of at most 128 range reads (etcd's default
	 * {@code --max-txn-ops}) sent at once; once they answered, the keep-alives of the
	 * etcd leases whose records still have their lease's holder and term, sent at once.
	 * That is a request per 128 leases and one per lease still held (etcd refreshes a
	 * lease only through a keep-alive of its own). A lease whose refresh failed is left
	 * out; the failure is thrown only when no lease was extended.
	 */
	@Override
	public Set<String> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout) {
		List<Lease> held = leases.stream().filter((lease) -> lease.holder() != null).toList();
		EtcdCall call = EtcdCall.ofGroups("renew", held.size(), timeout);
		List<GetResponse> records = call.read(this.client.getKVClient(),
				held.stream().map((lease) -> Op.get(recordKey(lease.group()), GetOption.DEFAULT)).toList());
		Map<String, CompletableFuture<Boolean>> refreshes = new LinkedHashMap<>();
		for (int i = 0; i < held.size(); i++) {
			Lease lease = held.get(i);
			GroupRecord.in(records.get(i))
				.filter((current) -> current.isHeldBy(lease))
				.ifPresent((current) -> refreshes.put(lease.group(),
						refresh(call, lease.group(), current, leaseDuration)));
		}
		return call.awaitEach(refreshes);
	}

	/**
	 * Refreshes the etcd lease of a record that still has the renewed lease's holder and
	 * term. One that expired while nobody took the group, or that had another duration,
	 * is replaced by a new one in a transaction compared on the record.
	 * @return whether the lease was extended
	 */
	private CompletableFuture<Boolean> refresh(EtcdCall call, String group, GroupRecord current,
			Duration leaseDuration) {
		return this.leases.keepAlive(current.leaseId()).thenCompose((ttl) -> {
			if (ttl == ttlSeconds(leaseDuration)) {
				return CompletableFuture.completedFuture(true);
			}
			// Every step of the chain checks the call's time: nothing is written for a
			// caller that already gave up.
			return call.then(() -> this.leases.grant(leaseDuration)).thenCompose((leaseId) -> {
				GroupRecord next = new GroupRecord(current.term(), leaseId, current.fenceId(), current.holder(),
						current.holder(), 0);
				return call.then(() -> write(group, Optional.of(current), next, leaseDuration))
					.thenApply((revision) -> {
						this.leases.revokeQuietly((revision >= 0) ? current.leaseId() : leaseId);
						return revision >= 0;
					});
			});
		});
	}

	@Override
	public void release(Lease lease, Duration timeout) {
		String group = lease.group();
		EtcdCall call = new EtcdCall("release", group, timeout);
		Optional<GroupRecord> record = record(call, group);
		if (record.isEmpty() || !record.get().isHeldBy(lease)) {
			return;
		}
		GroupRecord current = record.get();
		// The wait for an earlier holder stays for the next one.
		GroupRecord next = new GroupRecord(current.term(), 0, current.fenceId(), null, null, 0);
		if (call.await(commitIfUnchanged(group, record, Op.put(recordKey(group), next.encode(), PutOption.DEFAULT),
				Op.delete(leaseKey(group), DeleteOption.DEFAULT))) >= 0) {
			this.leases.revokeQuietly(current.leaseId());
		}
	}

	/**
	 * Writes the record and the lease key of a new holder or a new etcd lease, if the
	 * record is as it was read.
	 * @return the revision of the write, or -1 when the record had changed
	 */
	private CompletableFuture<Long> write(String group, Optional<GroupRecord> record, GroupRecord next,
			Duration leaseDuration) {
		return commitIfUnchanged(group, record, Op.put(recordKey(group), next.encode(), PutOption.DEFAULT),
				Op.put(leaseKey(group), bytes(next.term() + " " + ttlSeconds(leaseDuration)),
						PutOption.builder().withLeaseId(next.leaseId()).build()));
	}

	@Override
	public void forceLeader(String group, String candidateId, Duration timeout) {
		EtcdCall call = new EtcdCall("force a leader of", group, timeout);
		while (true) {
			Optional<GroupRecord> record = record(call, group);
			if (record.isPresent() && candidateId.equals(record.get().holder())) {
				return;
			}
			long term = nextTerm(group, record);
			GroupRecord next = record
				.map((current) -> new GroupRecord(term, current.leaseId(), current.fenceId(), current.leaseHolder(),
						candidateId, 0))
				.orElseGet(() -> new GroupRecord(term, 0, 0, null, candidateId, 0));
			if (writeRecord(call, group, record, next)) {
				remember(group, term);
				return;
			}
		}
	}

	@Override
	public void clear(String group, Duration timeout) {
		EtcdCall call = new EtcdCall("clear", group, timeout);
		while (true) {
			Optional<GroupRecord> record = record(call, group);
			if (record.isEmpty() || record.get().holder() == null) {
				return;
			}
			GroupRecord current = record.get();
			GroupRecord next = new GroupRecord(current.term(), current.leaseId(), current.fenceId(),
					current.leaseHolder(), null, 0);
			if (writeRecord(call, group, record, next)) {
				return;
			}
		}
	}

	/**
	 * Refreshes the candidate's etcd lease and reads the list, in two requests sent at
	 * once; see {@link EtcdCandidates#keepAlive}.
	 */
	@Override
	public Map<String, Integer> keepCandidateAlive(String candidateId, int weight, Duration ttl, Duration timeout) {
		return this.candidates.keepAlive(candidateId, weight, ttl, timeout);
	}

	@Override
	public void removeCandidate(String candidateId, Duration timeout) {
		this.candidates.remove(candidateId, timeout);
	}

	/**
	 * Tells of every change under the group's keys: a grant, a release, a force, and the
	 * expiry of the holder's etcd lease, which deletes the lease key.
	 */
	@Override
	public AutoCloseable watch(String group, Runnable onChange) {
		warmUp(group);
		Watch.Watcher watcher = this.client.getWatchClient()
			.watch(groupPrefix(group), WatchOption.builder().isPrefix(true).build(), (response) -> onChange.run(),
					(ex) -> {
						logger.debug("Watch of group '{}' in etcd failed; the election polls meanwhile", group, ex);
						onChange.run();
					});
		return watcher::close;
	}

	/**
	 * The first call of each kind in a JVM costs jetcd and gRPC a few hundred
	 * milliseconds; a follower's first ones would come at a handover. Asks once, without
	 * waiting and without writing, what an acquire will ask: the time left on a lease (0
	 * is none) and a transaction (a read-only one, which etcd answers without its log).
	 */
	private void warmUp(String group) {
		if (this.warmedUp.compareAndSet(false, true)) {
			this.leases.warmUp();
			this.client.getKVClient()
				.txn()
				.If(new Cmp(recordKey(group), Cmp.Op.GREATER, CmpTarget.version(0)))
				.Then(Op.get(recordKey(group), GetOption.DEFAULT))
				.commit()
				.exceptionally((ex) -> null);
		}
	}

	@Override
	public String backend() {
		return "etcd";
	}

	// Keys and records

	private ByteSequence groupPrefix(String group) {
		return bytes(this.namespace + "/groups/" + encode(group) + "/");
	}

	private ByteSequence recordKey(String group) {
		return bytes(this.namespace + "/groups/" + encode(group) + "/record");
	}

	private ByteSequence leaseKey(String group) {
		return bytes(this.namespace + "/groups/" + encode(group) + "/lease");
	}

	/**
	 * The group's record and whether its etcd lease lives, in one request: a range read
	 * of the group's keys.
	 */
	private GroupState state(EtcdCall call, String group) {
		return state(group, call.await(this.client.getKVClient().get(groupPrefix(group), PREFIX)));
	}

	private GroupState state(String group, GetResponse response) {
		GroupRecord record = null;
		KeyValue leaseKey = null;
		for (KeyValue keyValue : response.getKvs()) {
			if (keyValue.getKey().equals(recordKey(group))) {
				record = GroupRecord.decode(keyValue);
			}
			else if (keyValue.getKey().equals(leaseKey(group))) {
				leaseKey = keyValue;
			}
		}
		long liveTtl = -1;
		if (record != null && leaseKey != null && leaseKey.getLease() == record.leaseId()) {
			String[] fields = leaseKey.getValue().toString(StandardCharsets.UTF_8).split(" ");
			liveTtl = (fields.length == 2) ? Long.parseLong(fields[1]) : 0;
		}
		return new GroupState(record, liveTtl);
	}

	/**
	 * @param record the group's record, {@code null} for a group never led
	 * @param liveTtl the whole TTL of the live etcd lease, -1 when none lives
	 */
	private record GroupState(@Nullable GroupRecord record, long liveTtl) {
	}

	private Optional<GroupRecord> record(EtcdCall call, String group) {
		return GroupRecord.in(call.await(this.client.getKVClient().get(recordKey(group))));
	}

	private Cmp unchanged(String group, Optional<GroupRecord> record) {
		return record
			.map((current) -> new Cmp(recordKey(group), Cmp.Op.EQUAL, CmpTarget.modRevision(current.modRevision())))
			.orElseGet(() -> new Cmp(recordKey(group), Cmp.Op.EQUAL, CmpTarget.version(0)));
	}

	private boolean writeRecord(EtcdCall call, String group, Optional<GroupRecord> record, GroupRecord next) {
		return call
			.await(commitIfUnchanged(group, record, Op.put(recordKey(group), next.encode(), PutOption.DEFAULT))) >= 0;
	}

	/**
	 * Every write of this store: the operations, in one transaction, only if the record
	 * is as it was read.
	 * @return the revision of the write, or -1 when the record had changed
	 */
	private CompletableFuture<Long> commitIfUnchanged(String group, Optional<GroupRecord> record, Op... operations) {
		return this.client.getKVClient()
			.txn()
			.If(unchanged(group, record))
			.Then(operations)
			.commit()
			.thenApply((response) -> response.isSucceeded() ? response.getHeader().getRevision() : -1);
	}

	private long nextTerm(String group, Optional<GroupRecord> record) {
		long stored = record.map(GroupRecord::term).orElse(0L);
		return Math.max(stored, this.seenTerms.getOrDefault(group, 0L)) + 1;
	}

	private void remember(String group, long term) {
		this.seenTerms.merge(group, term, Math::max);
	}

	// etcd leases

	/**
	 * The TTL, in the whole seconds etcd counts, of the etcd lease behind a lease of the
	 * given duration: rounded up, so that it lasts at least as long.
	 * @param leaseDuration the lease duration
	 * @return the TTL in seconds
	 */
	public static long ttlSeconds(Duration leaseDuration) {
		long seconds = leaseDuration.getSeconds() + ((leaseDuration.getNano() > 0) ? 1 : 0);
		return Math.max(1, seconds);
	}

	/**
	 * Rounded up by a second: etcd reports whole seconds, cut down, and a holder must
	 * never think an earlier lease over before it is.
	 */
	private static Duration remaining(long ttlSeconds) {
		return (ttlSeconds < 0) ? Duration.ZERO : Duration.ofSeconds(ttlSeconds + 1);
	}

	private static Duration max(Duration a, Duration b) {
		return (a.compareTo(b) >= 0) ? a : b;
	}

	static ByteSequence bytes(String value) {
		return ByteSequence.from(value, StandardCharsets.UTF_8);
	}

	static String encode(String name) {
		return URLEncoder.encode(name, StandardCharsets.UTF_8);
	}

}
