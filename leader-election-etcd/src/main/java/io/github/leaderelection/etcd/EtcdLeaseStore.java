package io.github.leaderelection.etcd;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
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
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.etcd.NodeLeases.NodeLease;
import io.github.leaderelection.etcd.NodeLeases.Renewal;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.spi.AdminLeaseStore;
import io.github.leaderelection.spi.BatchCutShortException;
import io.github.leaderelection.spi.BatchLeaseStore;
import io.github.leaderelection.spi.CandidateListStore;
import io.github.leaderelection.spi.ChangeFeedStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.spi.RunRecordStore;
import io.github.leaderelection.spi.SeenTerms;
import io.github.leaderelection.spi.StoreNames;
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
 * A candidate's groups share one etcd lease (see {@link NodeLeases}): one keep-alive
 * renews them all, and a grant writes a transaction without granting an etcd lease first.
 * Expiry is judged by etcd alone: a lease lives as long as its etcd lease, whose TTL is
 * the lease duration rounded up to whole seconds (etcd counts TTLs in seconds), and the
 * store deletes the key of a group whose holder stopped renewing it while its other
 * groups keep the etcd lease alive. etcd may extend a lease when its own leader changes,
 * never shorten it; a holder's belief ends at its renew deadline whatever etcd does, so a
 * lease that outlives its TTL only delays the next holder. Remaining times read from etcd
 * are rounded up by a second, so that a new holder waits out an old lease too long rather
 * than too short.
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
 * The store uses the {@link Client} it is given and never closes it; {@link #close()}
 * closes the store's etcd watch.
 */
public class EtcdLeaseStore
		implements BatchLeaseStore, CandidateListStore, ChangeFeedStore, AdminLeaseStore, RunRecordStore {

	private static final Logger logger = LoggerFactory.getLogger(EtcdLeaseStore.class);

	/** The namespace used when none is given. */
	public static final String DEFAULT_NAMESPACE = "leader-election";

	static final String NAMESPACE_PATTERN = "^[A-Za-z][A-Za-z0-9_.]*(-[A-Za-z0-9_.]+)*(/[A-Za-z][A-Za-z0-9_.]*(-[A-Za-z0-9_.]+)*)*$";

	private static final Pattern NAMESPACE = Pattern.compile(NAMESPACE_PATTERN);

	private static final int NAMESPACE_MAX_LENGTH = 200;

	private static final GetOption PREFIX = GetOption.builder().isPrefix(true).build();

	/**
	 * Grants written in one transaction: two writes each, within etcd's default
	 * {@code --max-txn-ops} of 128.
	 */
	private static final int GRANTS_PER_TXN = EtcdCall.MAX_TXN_OPS / 2;

	private final Client client;

	private final String namespace;

	private final EtcdLeases leases;

	private final NodeLeases nodeLeases;

	private final EtcdCandidates candidates;

	private final EtcdRunRecords runs;

	private final GroupKeyReads groupKeys;

	private final AtomicBoolean warmedUp = new AtomicBoolean();

	/** What the last read of each group found: see {@link #recentRead}. */
	private final Map<String, RecentRead> recentReads = new ConcurrentHashMap<>();

	/** The watches, and what they last heard of each group: see {@link #heard}. */
	private final GroupWatches watches;

	/**
	 * Each group's record as this store last wrote it for a holder: a release is compared
	 * on its value without reading the record first.
	 */
	private final Map<String, GroupRecord> written = new ConcurrentHashMap<>();

	/** The highest term this store saw per group: terms survive a wiped etcd. */
	private final SeenTerms seenTerms = new SeenTerms("etcd");

	/** The highest term this store saw in any group: see {@link #nextTerm}. */
	private final AtomicReference<TermReading> latestTerm = new AtomicReference<>(
			new TermReading(0, System.nanoTime()));

	public EtcdLeaseStore(Client client) {
		this(client, DEFAULT_NAMESPACE);
	}

	/**
	 * @param client the etcd client, which the store does not close
	 * @param namespace the first part of every key, such as {@code leader-election}
	 */
	public EtcdLeaseStore(Client client, String namespace) {
		this.client = Objects.requireNonNull(client, "client");
		this.namespace = StoreNames.requireMatching("etcd namespace", namespace, NAMESPACE, NAMESPACE_MAX_LENGTH);
		this.leases = new EtcdLeases(client);
		this.nodeLeases = new NodeLeases(this.leases);
		this.candidates = new EtcdCandidates(client.getKVClient(), this.leases, this.namespace);
		this.runs = new EtcdRunRecords(client.getKVClient(), this.namespace);
		this.watches = new GroupWatches(client.getWatchClient(), this.namespace);
		this.groupKeys = new GroupKeyReads(client.getKVClient(), this.namespace);
	}

	/**
	 * Reads the group's two keys in one request. The lease is live while its key exists
	 * (etcd deletes it with the etcd lease); the time left is reported as the etcd
	 * lease's whole TTL plus a second, an upper bound: the exact figure would cost a
	 * second request on every poll, and the engine only asks whether the lease is live. A
	 * read that follows the watch's news of a release is answered from that news (see
	 * {@link #heard}).
	 */
	@Override
	public Optional<RunRecord> lastRun(String group, String job, Duration timeout) {
		return this.runs.read(new EtcdCall("read the last run of job '" + job + "' of", group, timeout), group, job);
	}

	@Override
	public List<RunRecord> runs(String group, Duration timeout) {
		return this.runs.list(new EtcdCall("read the last runs of the jobs of", group, timeout), group);
	}

	@Override
	public boolean claimRun(Lease lease, RunRecord run, Duration minInterval, Duration timeout) {
		if (!RunRecordStore.isClaimedUnder(lease, run)) {
			return false;
		}
		return this.runs.claim(
				new EtcdCall("claim tick " + run.tick() + " of job '" + run.job() + "' of", lease.group(), timeout),
				lease, run, minInterval);
	}

	@Override
	public boolean finishRun(RunRecord ended, Duration timeout) {
		return this.runs
			.finish(new EtcdCall("record the end of tick " + ended.tick() + " of job '" + ended.job() + "' of",
					ended.group(), timeout), ended);
	}

	@Override
	public Optional<Lease> read(String group, Duration timeout) {
		GroupState heard = heard(group, timeout);
		GroupState state = (heard != null) ? heard : state(new EtcdCall("read", group, timeout), group);
		this.recentReads.put(group, new RecentRead(state, System.nanoTime()));
		keepWarm(List.of(state), timeout);
		return lease(group, state);
	}

	/**
	 * Reads the groups as {@link #read} reads one: each with a range read of its two
	 * keys, in read-only transactions of at most 128 (etcd's default
	 * {@code --max-txn-ops}, above which it refuses a transaction), sent at once, one
	 * request per 128 groups; or, for more than {@value GroupKeyReads#SCAN_ABOVE} groups,
	 * the namespace's groups in pages of {@value GroupKeyReads#PAGE_KEYS} keys (see
	 * {@link GroupKeyReads}).
	 */
	@Override
	public Map<String, Lease> readAll(Collection<String> groups, Duration timeout) {
		List<String> distinct = List.copyOf(new LinkedHashSet<>(groups));
		EtcdCall call = EtcdCall.ofGroups("read", distinct.size(), timeout);
		Map<String, List<KeyValue>> keys = readKeys(call, distinct);
		Map<String, Lease> leases = new LinkedHashMap<>();
		List<GroupState> states = new ArrayList<>();
		for (String group : distinct) {
			GroupState state = state(group, keys.get(group));
			this.recentReads.put(group, new RecentRead(state, System.nanoTime()));
			states.add(state);
			lease(group, state).ifPresent((lease) -> leases.put(group, lease));
		}
		keepWarm(states, timeout);
		return leases;
	}

	/**
	 * Keeps a lease ready for this store's first grant, of the TTL of the leases read
	 * (the other instances run the same timing, as a rule): see {@link NodeLeases}.
	 */
	private void keepWarm(List<GroupState> states, Duration timeout) {
		states.stream()
			.mapToLong(GroupState::liveTtl)
			.filter((ttl) -> ttl > 0)
			.findFirst()
			.ifPresent((ttl) -> this.nodeLeases.keepWarm(ttl, timeout));
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

	/**
	 * Reads the group's keys, then writes the grant on the candidate's shared etcd lease
	 * in a transaction compared on the record, with a keep-alive of that lease sent
	 * alongside: the lease then lives at least its TTL from the start of the call. A
	 * candidate without a lease that may be alive first grants one, or takes the spare
	 * that its reads keep ready.
	 */
	@Override
	public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
		EtcdCall call = new EtcdCall("acquire", group, timeout);
		long start = System.nanoTime();
		GroupState recent = recentRead(group, timeout);
		if (recent != null) {
			Grant grant = plan(new LeaseLookups(call), group, candidateId, leaseDuration, recent);
			Lease taken = (grant != null) ? take(call, List.of(grant), candidateId, leaseDuration, start).get(group)
					: null;
			if (taken != null) {
				return Optional.of(taken);
			}
		}
		Grant grant = plan(new LeaseLookups(call), group, candidateId, leaseDuration, state(call, group));
		if (grant == null) {
			return Optional.empty();
		}
		return Optional.ofNullable(take(call, List.of(grant), candidateId, leaseDuration, start).get(group));
	}

	/**
	 * What this store's last read of the group found, if that was within the call
	 * timeout: the engine reads a group, then takes it when it found it free. A grant
	 * written on it is compared on the record as read, so one that is out of date is
	 * refused, never wrongly granted (the only change that does not touch the record is
	 * the expiry of the lease key, which frees the group); a refusal is then tried again
	 * on a fresh read. It saves a round trip on every handover.
	 */
	private @Nullable GroupState recentRead(String group, Duration timeout) {
		RecentRead recent = this.recentReads.remove(group);
		return (recent != null && System.nanoTime() - recent.nanos() < timeout.toNanos()) ? recent.state() : null;
	}

	private record RecentRead(GroupState state, long nanos) {
	}

	/**
	 * What the watch told of the group, if that was a release (or any record that names
	 * no etcd lease, so that no lease key can be live) heard within the call timeout, and
	 * the watch has told nothing of the group since. That is all a read would find, and
	 * the engine reads a group the moment the watch tells it of a change: the handover
	 * saves a round trip. A grant written on it is compared on the record, as one on
	 * {@link #recentRead} is; one whose term is below a term this store saw since is not
	 * used.
	 */
	private @Nullable GroupState heard(String group, Duration timeout) {
		GroupRecord released = this.watches.released(group, timeout);
		return (released != null && released.term() >= this.seenTerms.seen(group)) ? new GroupState(released, -1)
				: null;
	}

	/**
	 * Acquires as {@link #tryAcquire} does, for many groups: their keys read in read-only
	 * transactions of at most 128 ranges sent at once, then the grants' transactions and
	 * one keep-alive of the candidate's lease, all sent at once.
	 */
	@Override
	public Map<String, Lease> tryAcquireAll(Collection<String> groups, String candidateId, Duration leaseDuration,
			Duration timeout) {
		EtcdCall call = EtcdCall.ofGroups("acquire", groups.size(), timeout);
		long start = System.nanoTime();
		Map<String, GroupState> states = new LinkedHashMap<>();
		List<String> unread = new ArrayList<>();
		for (String group : new LinkedHashSet<>(groups)) {
			GroupState recent = recentRead(group, timeout);
			states.put(group, recent);
			if (recent == null) {
				unread.add(group);
			}
		}
		Map<String, List<KeyValue>> keys = readKeys(call, unread);
		unread.forEach((group) -> states.put(group, state(group, keys.get(group))));
		// What the plans ask of etcd leases, sent at once: the groups that one holder
		// had share its etcd lease, which is asked once.
		LeaseLookups lookups = new LeaseLookups(call);
		states.values().forEach((state) -> lookups.askFor(state, candidateId));
		List<Grant> grants = new ArrayList<>();
		Set<String> answered = new LinkedHashSet<>(states.keySet());
		LeaderElectionException failure = null;
		for (Map.Entry<String, GroupState> state : states.entrySet()) {
			try {
				Grant grant = plan(lookups, state.getKey(), candidateId, leaseDuration, state.getValue());
				if (grant != null) {
					grants.add(grant);
				}
			}
			catch (LeaderElectionException ex) {
				logger.debug("Could not acquire group '{}' in etcd", state.getKey(), ex);
				answered.remove(state.getKey());
				failure = (failure != null) ? failure : ex;
			}
		}
		if (grants.isEmpty() && failure != null) {
			throw failure;
		}
		Map<String, Lease> taken = take(call, grants, candidateId, leaseDuration, start);
		if (failure != null) {
			throw new BatchCutShortException(answered, taken, failure);
		}
		return taken;
	}

	/**
	 * What a grant of the group to the candidate is to write, or {@code null} when
	 * another candidate holds it.
	 * @param lookups what the call asked of etcd leases since the state was read
	 */
	private @Nullable Grant plan(LeaseLookups lookups, String group, String candidateId, Duration leaseDuration,
			GroupState state) {
		Optional<GroupRecord> record = Optional.ofNullable(state.record());
		// etcd lost what this store saw (a wiped cluster, a restore from an older
		// snapshot): the holder of the lost term may still believe it leads.
		boolean lost = this.seenTerms.isLost(group, record.map(GroupRecord::term).orElse(null),
				record.map(GroupRecord::holder).orElse(null));
		long fenceId = 0;
		long fenceSeconds = -1;
		if (record.isPresent()) {
			GroupRecord current = record.get();
			remember(group, current.term());
			boolean live = state.liveTtl() >= 0;
			if (live && current.holder() != null && !candidateId.equals(current.holder())) {
				return null;
			}
			// An earlier holder may still believe: one whose grant an even earlier
			// holder's wait (the fence) still covers, ...
			long earlierTtl = lookups.timeToLive(current.fenceId());
			if (earlierTtl >= 0) {
				fenceId = current.fenceId();
				fenceSeconds = earlierTtl + 1;
			}
			// ... or another candidate whose lease key still lives (the group was forced
			// or cleared away from it). Its belief ends within a lease duration from the
			// start of its last renewal, which came before the force: a TTL from now
			// covers it. A timer lease of that TTL, granted now, is the fence that a
			// later holder waits out, should this one give up before.
			if (live && !candidateId.equals(current.leaseHolder()) && state.liveTtl() + 1 > fenceSeconds) {
				fenceSeconds = state.liveTtl() + 1;
				fenceId = lookups.fence(fenceSeconds);
			}
			// ... or the holder whose lease key is gone while its etcd lease lives: etcd
			// did not end the key (it ends with that lease), someone deleted it (by hand,
			// a restore), and the holder may still believe until its etcd lease runs out.
			if (!live && current.leaseHolder() != null && !candidateId.equals(current.leaseHolder())) {
				long holderTtl = lookups.timeToLive(current.leaseId());
				if (holderTtl >= 0 && holderTtl + 1 > fenceSeconds) {
					fenceSeconds = holderTtl + 1;
					fenceId = lookups.fence(fenceSeconds);
				}
			}
		}
		Duration activeIn = (fenceSeconds >= 0) ? Duration.ofSeconds(fenceSeconds) : Duration.ZERO;
		long term = nextTerm(group, record);
		if (lost) {
			this.seenTerms.warnLost(group, term);
			activeIn = this.seenTerms.lostWait(group, activeIn, Duration.ofSeconds(ttlSeconds(leaseDuration)));
		}
		return new Grant(group, record, term, fenceId, activeIn);
	}

	/**
	 * Writes the grants on the candidate's shared lease: the one it has, if that may be
	 * alive; else, or when etcd answers that it is gone, a new one.
	 */
	private Map<String, Lease> take(EtcdCall call, List<Grant> grants, String candidateId, Duration leaseDuration,
			long start) {
		if (grants.isEmpty()) {
			return Map.of();
		}
		long ttl = ttlSeconds(leaseDuration);
		NodeLease lease = this.nodeLeases.forGrant(candidateId, ttl);
		Map<String, Lease> taken = new LinkedHashMap<>();
		List<Grant> refused = grants;
		if (lease != null) {
			refused = write(call, grants, candidateId, lease, true, leaseDuration, start, taken);
			if (refused.isEmpty()) {
				return taken;
			}
		}
		NodeLease granted = call.await(this.nodeLeases.grant(candidateId, ttl));
		write(call, refused, candidateId, granted, false, leaseDuration, start, taken);
		return taken;
	}

	/**
	 * Writes the grants on the lease, in transactions compared on their records, all sent
	 * at once; unless the lease was granted for this call, with a keep-alive of it sent
	 * alongside. A grant counts only if the lease lived through it: the keep-alive found
	 * it alive, and it lasts a TTL from then, which is after the call started.
	 * @param taken where the leases granted go
	 * @return the grants that etcd refused because the lease was gone
	 */
	private List<Grant> write(EtcdCall call, List<Grant> grants, String candidateId, NodeLease lease, boolean refresh,
			Duration leaseDuration, long start, Map<String, Lease> taken) {
		Map<Grant, CompletableFuture<Long>> writes = new LinkedHashMap<>();
		for (int from = 0; from < grants.size(); from += GRANTS_PER_TXN) {
			List<Grant> chunk = grants.subList(from, Math.min(grants.size(), from + GRANTS_PER_TXN));
			CompletableFuture<Map<Grant, Long>> together = writeTogether(chunk, candidateId, lease, leaseDuration,
					true);
			chunk.forEach((grant) -> writes.put(grant, together.thenApply((revisions) -> revisions.get(grant))));
		}
		// After the writes, which wait for etcd's log: the keep-alive does not, and is
		// answered first all the same.
		CompletableFuture<Long> refreshed = refresh ? this.nodeLeases.keepAlive(lease.id())
				: CompletableFuture.completedFuture(lease.ttlSeconds());
		LeaderElectionException failure = null;
		long ttlNow;
		try {
			ttlNow = call.await(refreshed);
		}
		catch (LeaderElectionException ex) {
			ttlNow = 0;
			failure = ex;
		}
		List<Grant> refused = new ArrayList<>();
		for (Map.Entry<Grant, CompletableFuture<Long>> write : writes.entrySet()) {
			Grant grant = write.getKey();
			try {
				long revision = call.await(write.getValue());
				if (revision < 0) {
					continue;
				}
				remember(grant.group(), grant.term());
				this.written.put(grant.group(),
						new GroupRecord(grant.term(), lease.id(), grant.fenceId(), candidateId, candidateId, revision));
				this.nodeLeases.attach(grant.group(), lease.id(), revision, start);
				if (ttlNow >= lease.ttlSeconds()) {
					taken.put(grant.group(),
							new Lease(grant.group(), candidateId, grant.term(), leaseDuration, grant.activeIn()));
				}
			}
			catch (LeaderElectionException ex) {
				if (EtcdLeases.isGone(ex)) {
					refused.add(grant);
				}
				else {
					logger.debug("Could not acquire group '{}' in etcd", grant.group(), ex);
					failure = (failure != null) ? failure : ex;
				}
			}
		}
		if (taken.isEmpty() && refused.isEmpty() && failure != null) {
			throw failure;
		}
		return refused;
	}

	/**
	 * Writes the grants in one transaction compared on their records, as many as etcd
	 * takes in one. Should some records have changed since they were read (another
	 * instance took those groups first, as at the start of many instances), the
	 * transaction answers with the records as they are, and the grants whose records are
	 * unchanged are written together once more; a grant refused then waits for the next
	 * round. Written one by one instead, the refusals of three instances starting with
	 * 10,000 groups cost thousands of transactions and outlast the call.
	 * @param again whether to write the unchanged grants once more after a refusal
	 * @return each grant's revision, or -1 when it was not written
	 */
	private CompletableFuture<Map<Grant, Long>> writeTogether(List<Grant> grants, String candidateId, NodeLease lease,
			Duration leaseDuration, boolean again) {
		List<Cmp> compares = new ArrayList<>();
		List<Op> puts = new ArrayList<>();
		List<Op> reads = new ArrayList<>();
		for (Grant grant : grants) {
			GroupRecord next = new GroupRecord(grant.term(), lease.id(), grant.fenceId(), candidateId, candidateId, 0);
			compares.add(unchanged(grant.group(), grant.record()));
			puts.addAll(writes(grant.group(), next, leaseDuration));
			reads.add(Op.get(recordKey(grant.group()), GetOption.DEFAULT));
		}
		return this.client.getKVClient()
			.txn()
			.If(compares.toArray(Cmp[]::new))
			.Then(puts.toArray(Op[]::new))
			.Else(reads.toArray(Op[]::new))
			.commit()
			.thenCompose((response) -> {
				Map<Grant, Long> revisions = new LinkedHashMap<>();
				if (response.isSucceeded()) {
					grants.forEach((grant) -> revisions.put(grant, response.getHeader().getRevision()));
					return CompletableFuture.completedFuture(revisions);
				}
				List<Grant> unchanged = new ArrayList<>();
				List<GetResponse> records = response.getGetResponses();
				for (int i = 0; i < grants.size(); i++) {
					Grant grant = grants.get(i);
					revisions.put(grant, -1L);
					Optional<GroupRecord> now = GroupRecord.in(records.get(i));
					if (now.map(GroupRecord::modRevision).equals(grant.record().map(GroupRecord::modRevision))) {
						unchanged.add(grant);
					}
				}
				if (!again || unchanged.isEmpty()) {
					return CompletableFuture.completedFuture(revisions);
				}
				return writeTogether(unchanged, candidateId, lease, leaseDuration, false).thenApply((written) -> {
					revisions.putAll(written);
					return revisions;
				});
			});
	}

	/**
	 * A grant to write.
	 *
	 * @param record the group's record as read, empty for a group never led
	 * @param fenceId the timer lease that a later holder waits out, 0 for none
	 * @param activeIn how long the new holder waits before it acts
	 */
	private record Grant(String group, Optional<GroupRecord> record, long term, long fenceId, Duration activeIn) {
	}

	/**
	 * What the plans of one call ask of etcd leases once the groups' states were read:
	 * the time left on an earlier holder's etcd lease or fence, and the fences granted
	 * for the new holder to wait out. The time left is asked once per etcd lease, and a
	 * fence granted once per TTL, however many groups need it: the groups that a
	 * candidate held share its etcd lease, and a round trip per group, one after the
	 * other, makes a batch that takes over many of them outlast its timeout, round after
	 * round, however soon the lease ran out. An answer serves only plans of states read
	 * before it was asked: a time left asked after the read, or a fence granted after it,
	 * covers a belief that began before it.
	 */
	private final class LeaseLookups {

		private final EtcdCall call;

		private final Map<Long, CompletableFuture<Long>> timesToLive = new HashMap<>();

		private final Map<Long, CompletableFuture<Long>> fences = new HashMap<>();

		LeaseLookups(EtcdCall call) {
			this.call = call;
		}

		/**
		 * Asks, without waiting, the time left on the etcd leases that the plan of the
		 * state will ask about; what it asks beyond them it asks when it needs it.
		 */
		void askFor(GroupState state, String candidateId) {
			GroupRecord current = state.record();
			if (current == null) {
				return;
			}
			boolean live = state.liveTtl() >= 0;
			if (live && current.holder() != null && !candidateId.equals(current.holder())) {
				return;
			}
			ask(current.fenceId());
			if (!live && current.leaseHolder() != null && !candidateId.equals(current.leaseHolder())) {
				ask(current.leaseId());
			}
		}

		/** Seconds left on an etcd lease, or -1 when it is gone (or there is none). */
		long timeToLive(long leaseId) {
			if (leaseId == 0) {
				return -1;
			}
			return this.call.await(ask(leaseId));
		}

		/** A timer lease of the given TTL, which a later holder waits out. */
		long fence(long ttlSeconds) {
			return this.call.await(this.fences.computeIfAbsent(ttlSeconds, EtcdLeaseStore.this.leases::grant));
		}

		private CompletableFuture<Long> ask(long leaseId) {
			return this.timesToLive.computeIfAbsent(leaseId, EtcdLeaseStore.this.leases::timeToLive);
		}

	}

	/**
	 * Reads the record, and if it still has this holder and term, refreshes the etcd
	 * lease: two requests. The refresh is sent only once the read answered, so a leader
	 * whose answers no longer arrive stops keeping its lease alive.
	 */
	@Override
	public Optional<Lease> renew(Lease lease, Duration leaseDuration, Duration timeout) {
		String group = lease.group();
		EtcdCall call = new EtcdCall("renew", group, timeout);
		Renewal renewal = this.nodeLeases.renewalBegins(List.of(group));
		try {
			long start = System.nanoTime();
			GroupRecord record = record(call, group).orElse(null);
			return Optional.ofNullable(renewHeld(call, renewal, List.of(lease), Collections.singletonList(record),
					leaseDuration, timeout, start)
				.get(group));
		}
		finally {
			this.nodeLeases.renewalOver(renewal);
		}
	}

	/**
	 * Renews as {@link #renew} does, each lease judged on its own: first the groups'
	 * keys, as {@link #readAll} reads them (for many groups, the namespace in pages);
	 * once they answered, one keep-alive of the shared etcd lease that carries the leases
	 * still held. A lease whose refresh failed is left out; the failure is thrown only
	 * when no lease was extended.
	 */
	@Override
	public Map<String, Lease> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout) {
		List<Lease> held = leases.stream().filter((lease) -> lease.holder() != null).toList();
		EtcdCall call = EtcdCall.ofGroups("renew", held.size(), timeout);
		List<String> groups = held.stream().map(Lease::group).toList();
		Renewal renewal = this.nodeLeases.renewalBegins(groups);
		try {
			long start = System.nanoTime();
			Map<String, List<KeyValue>> keys = readKeys(call, groups);
			List<@Nullable GroupRecord> records = new ArrayList<>();
			groups.forEach((group) -> records.add(state(group, keys.get(group)).record()));
			return renewHeld(call, renewal, held, records, leaseDuration, timeout, start);
		}
		finally {
			this.nodeLeases.renewalOver(renewal);
		}
	}

	/**
	 * Refreshes, once each, the etcd leases of the records that still have their lease's
	 * holder and term (one, the candidate's shared lease, but for a lease granted anew
	 * meanwhile), and deletes the keys on them that no belief covers any more (see
	 * {@link NodeLeases}). A record whose etcd lease expired while nobody took the group,
	 * or has a shorter TTL, moves to the candidate's lease in a transaction compared on
	 * the record. A group whose key was being ended as an orphan when the renewal began
	 * is not renewed (see {@link NodeLeases}).
	 * @param renewal the renewal under way, which began before the records were read
	 * @param records each lease's record as read, {@code null} if missing
	 * @param timeout the time a renewal may take, which its holder's engine gives every
	 * renewal (see {@link NodeLeases#orphans})
	 * @param start when the reads were sent: a renewed belief counts from then
	 * @return the leases as renewed, by group
	 */
	private Map<String, Lease> renewHeld(EtcdCall call, Renewal renewal, List<Lease> leases,
			List<@Nullable GroupRecord> records, Duration leaseDuration, Duration timeout, long start) {
		long ttl = ttlSeconds(leaseDuration);
		Map<Long, Map<String, GroupRecord>> byEtcdLease = new LinkedHashMap<>();
		Map<String, Lease> byGroup = new LinkedHashMap<>();
		for (int i = 0; i < leases.size(); i++) {
			Lease lease = leases.get(i);
			GroupRecord current = records.get(i);
			if (current != null && current.isHeldBy(lease) && renewal.counts(lease.group())) {
				byEtcdLease.computeIfAbsent(current.leaseId(), (id) -> new LinkedHashMap<>())
					.put(lease.group(), current);
				byGroup.put(lease.group(), lease);
			}
			else {
				this.nodeLeases.cannotRenew(renewal, lease.group());
				this.nodeLeases.detachUnlessOn(lease.group(), (current != null) ? current.leaseId() : 0);
			}
		}
		Map<Long, CompletableFuture<Long>> refreshes = new LinkedHashMap<>();
		List<CompletableFuture<?>> deletions = new ArrayList<>();
		for (long etcdLease : byEtcdLease.keySet()) {
			refreshes.put(etcdLease, this.nodeLeases.keepAlive(etcdLease));
			for (NodeLeases.Attachment orphan : this.nodeLeases.orphans(etcdLease, ttl, timeout)) {
				deletions.add(deleteOrphan(orphan));
			}
		}
		Set<String> renewed = new LinkedHashSet<>();
		Map<String, List<Grant>> moves = new LinkedHashMap<>();
		LeaderElectionException failure = null;
		for (Map.Entry<Long, Map<String, GroupRecord>> held : byEtcdLease.entrySet()) {
			long ttlNow;
			try {
				ttlNow = call.await(refreshes.get(held.getKey()));
			}
			catch (LeaderElectionException ex) {
				logger.debug("Could not renew {} groups in etcd", held.getValue().size(), ex);
				failure = (failure != null) ? failure : ex;
				continue;
			}
			held.getValue().forEach((group, current) -> {
				if (ttlNow >= ttl) {
					this.nodeLeases.renewed(group, held.getKey(), start);
					renewed.add(group);
				}
				else {
					moves.computeIfAbsent(current.holder(), (holder) -> new ArrayList<>())
						.add(new Grant(group, Optional.of(current), current.term(), current.fenceId(), Duration.ZERO));
				}
			});
		}
		// Groups whose etcd lease expired while nobody took them, or has a shorter
		// TTL: to the holder's current lease, without a new term, if nobody took them
		// meanwhile (the transaction is compared on the record as read).
		for (Map.Entry<String, List<Grant>> move : moves.entrySet()) {
			try {
				renewed.addAll(take(call, move.getValue(), move.getKey(), leaseDuration, start).keySet());
			}
			catch (LeaderElectionException ex) {
				failure = (failure != null) ? failure : ex;
			}
		}
		for (CompletableFuture<?> deletion : deletions) {
			deletion.exceptionally((ex) -> null);
		}
		if (renewed.isEmpty() && failure != null) {
			throw failure;
		}
		Map<String, Lease> extended = new LinkedHashMap<>();
		renewed.forEach((group) -> extended.put(group, byGroup.get(group).renewedFor(leaseDuration)));
		return extended;
	}

	/**
	 * Ends a lease that no belief covers any more, unless its key was written again
	 * since. If the record is still as the grant that wrote the key left it, the group is
	 * released as {@link #release} releases it, in a transaction compared on both keys:
	 * the holder's belief is over (it ends less than a lease duration after the start of
	 * its last renewal, on this machine's clock), whereas a record that still named it,
	 * without a lease key and on an etcd lease that its other groups keep alive, would
	 * make the next holder wait that etcd lease out (see {@link #plan}). Otherwise (the
	 * record was forced or cleared away from the holder since) only the key goes.
	 */
	private CompletableFuture<Void> deleteOrphan(NodeLeases.Attachment orphan) {
		String group = orphan.group();
		ByteSequence key = leaseKey(group);
		Cmp keyUnchanged = new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(orphan.keyRevision()));
		GroupRecord written = this.written.get(group);
		boolean asGranted = written != null && written.leaseId() == orphan.leaseId()
				&& written.modRevision() == orphan.keyRevision();
		CompletableFuture<Boolean> released = CompletableFuture.completedFuture(false);
		if (asGranted) {
			GroupRecord next = new GroupRecord(written.term(), 0, written.fenceId(), null, null, 0);
			released = this.client.getKVClient()
				.txn()
				.If(keyUnchanged, new Cmp(recordKey(group), Cmp.Op.EQUAL, CmpTarget.modRevision(orphan.keyRevision())))
				.Then(Op.put(recordKey(group), next.encode(), PutOption.DEFAULT), Op.delete(key, DeleteOption.DEFAULT))
				.commit()
				.thenApply(TxnResponse::isSucceeded);
		}
		return released.thenCompose((done) -> {
			if (done) {
				this.written.remove(group, written);
				if (written.holder() != null) {
					this.seenTerms.gaveUp(group, written.holder(), written.term());
				}
				logger.debug("Released group '{}' in etcd: its holder has not renewed it for a TTL", group);
				return CompletableFuture.completedFuture(null);
			}
			return this.client.getKVClient()
				.txn()
				.If(keyUnchanged)
				.Then(Op.delete(key, DeleteOption.DEFAULT))
				.commit()
				.thenAccept((response) -> {
					if (response.isSucceeded()) {
						logger.debug(
								"Deleted the lease key of group '{}' in etcd: its holder has not renewed it for a TTL",
								group);
					}
				});
		}).thenRun(() -> this.nodeLeases.detach(group, orphan.leaseId())).whenComplete((done, ex) -> {
			this.nodeLeases.orphanEnded(orphan);
		});
	}

	/**
	 * In one compared transaction, the record keeps its term and names nobody, and the
	 * lease key goes. The shared etcd lease lives on for the holder's other groups.
	 *
	 * <p>
	 * If this store wrote the record for the holder, the transaction is compared on the
	 * record's value as written, without a read: a record that still names the holder,
	 * its term and its etcd lease is the holder's, whatever happened in between (terms
	 * only grow, so it cannot have come back to that value; the revision is not compared,
	 * as a wiped etcd counts revisions again). If it did not, or the record changed, the
	 * record is read first.
	 */
	@Override
	public void release(Lease lease, Duration timeout) {
		String group = lease.group();
		EtcdCall call = new EtcdCall("release", group, timeout);
		if (lease.holder() != null) {
			this.seenTerms.gaveUp(group, lease.holder(), lease.term());
		}
		GroupRecord written = this.written.remove(group);
		if (written != null && written.isHeldBy(lease) && release(call, group, written,
				new Cmp(recordKey(group), Cmp.Op.EQUAL, CmpTarget.value(written.encode())))) {
			return;
		}
		Optional<GroupRecord> record = record(call, group);
		if (record.isPresent() && record.get().isHeldBy(lease)) {
			release(call, group, record.get(), unchanged(group, record));
		}
	}

	private boolean release(EtcdCall call, String group, GroupRecord current, Cmp unchanged) {
		// The wait for an earlier holder stays for the next one.
		GroupRecord next = new GroupRecord(current.term(), 0, current.fenceId(), null, null, 0);
		TxnResponse response = call.await(this.client.getKVClient()
			.txn()
			.If(unchanged)
			.Then(Op.put(recordKey(group), next.encode(), PutOption.DEFAULT),
					Op.delete(leaseKey(group), DeleteOption.DEFAULT))
			.commit());
		if (response.isSucceeded()) {
			this.nodeLeases.detach(group, current.leaseId());
		}
		return response.isSucceeded();
	}

	/** The record, and the lease key on the record's etcd lease. */
	private List<Op> writes(String group, GroupRecord next, Duration leaseDuration) {
		return List.of(Op.put(recordKey(group), next.encode(), PutOption.DEFAULT),
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
	 * expiry of the holder's etcd lease, which deletes the lease key. One etcd watch over
	 * the namespace's groups serves every watch of this store, whatever their number; see
	 * {@link GroupWatches}.
	 */
	@Override
	public AutoCloseable watch(String group, Runnable onChange) {
		warmUp(group);
		return this.watches.watch(group, onChange);
	}

	/**
	 * The first call of each kind in a JVM costs jetcd and gRPC a few hundred
	 * milliseconds; a follower's first ones would come at a handover. Asks once, without
	 * waiting and without changing anything, what an acquire will ask: the time left on a
	 * lease and a keep-alive (of no lease), and a transaction that writes the group's
	 * keys only if the record's version is below 0, which it never is.
	 */
	private void warmUp(String group) {
		if (this.warmedUp.compareAndSet(false, true)) {
			this.leases.warmUp();
			// A record that never was: compared on revision -1, the grant is refused.
			GroupRecord never = new GroupRecord(0, 0, 0, null, null, -1);
			Grant grant = new Grant(group, Optional.of(never), 0, 0, Duration.ZERO);
			CompletableFuture
				.runAsync(() -> write(new EtcdCall("warm up", group, Duration.ofSeconds(5)), List.of(grant), "~",
						new NodeLease(0, 1, 0), false, Duration.ofSeconds(1), 0, new HashMap<>()))
				.exceptionally((ex) -> null);
		}
	}

	@Override
	public String backend() {
		return "etcd";
	}

	/** Closes the etcd watch of the watches, if there is one. */
	@Override
	public void close() {
		this.watches.close();
	}

	// Keys and records

	private ByteSequence groupPrefix(String group) {
		return groupPrefix(this.namespace, group);
	}

	/** The prefix of a group's keys: {@code <namespace>/groups/<group>/}. */
	static ByteSequence groupPrefix(String namespace, String group) {
		return bytes(namespace + "/groups/" + encode(group) + "/");
	}

	private ByteSequence recordKey(String group) {
		return groupKey(this.namespace, group, "record");
	}

	private ByteSequence leaseKey(String group) {
		return groupKey(this.namespace, group, "lease");
	}

	/** A key of the group's: {@code <namespace>/groups/<group>/<name>}. */
	static ByteSequence groupKey(String namespace, String group, String name) {
		return bytes(namespace + "/groups/" + encode(group) + "/" + name);
	}

	/**
	 * The group's record and whether its etcd lease lives, in one request: a range read
	 * of the group's keys.
	 */
	private GroupState state(EtcdCall call, String group) {
		return state(group, call.await(this.client.getKVClient().get(groupPrefix(group), PREFIX)));
	}

	private GroupState state(String group, GetResponse response) {
		return state(group, response.getKvs());
	}

	private GroupState state(String group, List<KeyValue> keys) {
		GroupRecord record = null;
		KeyValue leaseKey = null;
		for (KeyValue keyValue : keys) {
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

	/** The groups' keys, by group: see {@link GroupKeyReads}. */
	private Map<String, List<KeyValue>> readKeys(EtcdCall call, List<String> groups) {
		return this.groupKeys.read(call, groups);
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

	/**
	 * The term of the next grant: never below this machine's clock in microseconds (etcd
	 * tells no time), so that a group whose record went back (a restore, a hand edit)
	 * does not hand out a term again to a candidate that had not seen the later one; nor
	 * below the highest term this store read in any group, advanced by the time since, so
	 * that an instance whose clock is behind the others' (set back by hand, a virtual
	 * machine resumed) follows theirs. The clock is a floor for terms only, never a judge
	 * of expiry.
	 */
	private long nextTerm(String group, Optional<GroupRecord> record) {
		long clockMicros = Math.max(System.currentTimeMillis() * 1000, this.latestTerm.get().now());
		return Math.max(this.seenTerms.nextTerm(group, record.map(GroupRecord::term).orElse(null), clockMicros),
				clockMicros);
	}

	private void remember(String group, long term) {
		this.seenTerms.saw(group, term);
		if (term > this.latestTerm.get().now()) {
			TermReading reading = new TermReading(term, System.nanoTime());
			this.latestTerm.accumulateAndGet(reading, (old, now) -> (now.now() > old.now()) ? now : old);
		}
	}

	/**
	 * A term read or granted, and when, on this machine's monotonic clock: terms follow
	 * the instances' clocks in microseconds, so the term read advances with the time
	 * since, as the clock of the instance that granted it does.
	 */
	private record TermReading(long term, long nanos) {

		/**
		 * The term as its granter's clock would give it now, capped at the largest long.
		 */
		long now() {
			long advanced = this.term + (System.nanoTime() - this.nanos) / 1000;
			return (advanced < this.term) ? Long.MAX_VALUE : advanced;
		}

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

	static ByteSequence bytes(String value) {
		return ByteSequence.from(value, StandardCharsets.UTF_8);
	}

	static String encode(String name) {
		return URLEncoder.encode(name, StandardCharsets.UTF_8);
	}

}
