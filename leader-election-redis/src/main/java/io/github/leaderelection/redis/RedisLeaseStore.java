package io.github.leaderelection.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.spi.AdminLeaseStore;
import io.github.leaderelection.spi.BatchLeaseStore;
import io.github.leaderelection.spi.CandidateListStore;
import io.github.leaderelection.spi.ChangeFeedStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.spi.RunRecordStore;
import io.github.leaderelection.spi.SeenTerms;
import io.github.leaderelection.spi.StoreNames;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A lease store in Redis (standalone, Sentinel or Cluster, as the application's Lettuce
 * connection factory reaches it), safe when Redis loses its data.
 *
 * <p>
 * A group has two keys in one hash slot, {@code <prefix>{<group>}:lease} (the live lease,
 * expired by Redis) and {@code <prefix>{<group>}:term} (a record without expiry: holder,
 * term, lease end and the Redis process that vouches for them), and a channel
 * {@code <prefix>{<group>}:events} on which release, force and clear are announced;
 * {@code %}, <code>{</code> and <code>}</code> in a group name are percent-encoded so
 * that they cannot change the hash tag. Every operation is one Lua script, whose only
 * clock is Redis's {@code TIME}; see {@link LeaseScripts}. Acquiring, renewing or reading
 * many groups takes one script per batch of groups (on a cluster, of groups that share a
 * hash slot), all sent at once: see {@link #renewAll}.
 *
 * <p>
 * When Redis loses data (a restart without persistence, {@code FLUSHALL}, a restart from
 * an old snapshot, a failover to a replica that missed writes), a leader may still
 * believe it leads. A grant that cannot prove the previous lease over (the record is
 * missing although this store saw it, or was not written by the Redis process now serving
 * it) therefore tells the engine to wait one lease duration before acting, and takes a
 * term of at least Redis's clock in microseconds. Other grants take the last term plus
 * one, so every term stays at most the microseconds of its grant (grants are scripts of
 * more than a microsecond each), and the new term is above every earlier one as long as
 * Redis's clock has not stepped back when the data is lost. NOTE: a candidate process
 * that never saw a group cannot tell a lost record from a group never led, and acts at
 * once; the leader that lost its record stops at its next renewal, or at its renew
 * deadline while Redis does not answer.
 *
 * <p>
 * The live candidates that balancing spreads groups over are a sorted set
 * {@code <prefix>{<prefix>}:candidates} of candidates scored by the end of their entry
 * (Redis's clock) and a hash {@code <prefix>{<prefix>}:candidate-weights} of their
 * weights, both in the slot of the prefix (which the prefix pattern keeps free of
 * braces), and apart from every group's keys ({@code :lease}, {@code :term},
 * {@code :events}) by their suffixes. If Redis loses them, each candidate's next
 * keep-alive, within one retry period, writes its entry again: until then balancing may
 * move groups needlessly, which changes who leads but never lets two lead at once, so
 * unlike acquire and renew these writes never wait for replicas.
 *
 * <p>
 * Each call waits at most the timeout it is given (less if the connection factory's
 * command timeout is shorter); only opening a new connection is bounded by the factory's
 * connect timeout instead. A command given up on may still run later: every script judges
 * by the state it finds, so a late one is harmless.
 */
public class RedisLeaseStore
		implements BatchLeaseStore, CandidateListStore, ChangeFeedStore, AdminLeaseStore, RunRecordStore {

	/** The default key prefix. */
	public static final String DEFAULT_KEY_PREFIX = "leader-election:";

	static final String KEY_PREFIX_PATTERN = "^[A-Za-z][A-Za-z0-9_.:]*(-[A-Za-z0-9_.:]+)*$";

	private static final Pattern KEY_PREFIX = Pattern.compile(KEY_PREFIX_PATTERN);

	private static final int KEY_PREFIX_MAX_LENGTH = 64;

	private final String keyPrefix;

	private final boolean waitsForReplicas;

	private final LeaseCalls calls;

	/** The highest term this store has seen of each group: a record below it was lost. */
	private final SeenTerms seenTerms = new SeenTerms("redis");

	private final LeaseEvents events;

	public RedisLeaseStore(RedisConnectionFactory connectionFactory) {
		this(connectionFactory, DEFAULT_KEY_PREFIX);
	}

	public RedisLeaseStore(RedisConnectionFactory connectionFactory, String keyPrefix) {
		this(connectionFactory, keyPrefix, 0, Duration.ZERO);
	}

	/**
	 * Creates a store that, after each acquire and renew, waits for replicas to
	 * acknowledge the write ({@code WAIT}) and counts the operation as failed when fewer
	 * than {@code replicaAcks} do within {@code replicaAckTimeout} (or the call's own
	 * timeout, if shorter).
	 * @param keyPrefix a prefix of letters, digits, {@code _ . : -} (no {@code --}),
	 * starting with a letter
	 * @param replicaAcks replicas that must acknowledge; 0 not to wait
	 * @throws IllegalArgumentException if the prefix or the acknowledgement options are
	 * invalid
	 */
	public RedisLeaseStore(RedisConnectionFactory connectionFactory, String keyPrefix, int replicaAcks,
			Duration replicaAckTimeout) {
		Objects.requireNonNull(connectionFactory, "connectionFactory");
		if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
			throw new IllegalArgumentException("The Redis lease store needs a LettuceConnectionFactory (Lettuce), not "
					+ connectionFactory.getClass().getName());
		}
		this.keyPrefix = StoreNames.requireMatching("Redis key prefix", keyPrefix, KEY_PREFIX, KEY_PREFIX_MAX_LENGTH);
		if (replicaAcks < 0) {
			throw new IllegalArgumentException("replicaAcks must not be negative but is " + replicaAcks);
		}
		Objects.requireNonNull(replicaAckTimeout, "replicaAckTimeout");
		if (replicaAcks > 0 && replicaAckTimeout.toMillis() < 1) {
			throw new IllegalArgumentException(
					"replicaAckTimeout must be at least 1ms when replicaAcks is set, but is " + replicaAckTimeout);
		}
		this.waitsForReplicas = replicaAcks > 0;
		this.calls = new LeaseCalls(lettuce, replicaAcks, replicaAckTimeout);
		this.events = new LeaseEvents(connectionFactory, this.keyPrefix);
	}

	@Override
	public Optional<Lease> read(String group, Duration timeout) {
		long start = System.nanoTime();
		Optional<Lease> lease = toLease(group, call("read the lease of", group, timeout, LeaseScripts.READ, false));
		lease.ifPresent((read) -> this.seenTerms.sawLease(read, start));
		return lease;
	}

	@Override
	public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		LeaseCalls.Call call = call("acquire the lease of", group, timeout, this.waitsForReplicas);
		List<Object> reply = call.run(LeaseScripts.ACQUIRE,
				script(List.of(group), List.of(candidateId, millis(leaseDuration), seenTerm(group), seenHolder(group),
						seenLeaseLeft(group), lostWait(group, leaseDuration), givenUp(group, candidateId))));
		Optional<Lease> lease = toLease(group, reply);
		if (lease.isPresent() && Long.valueOf(1).equals(reply.get(4))) {
			this.seenTerms.warnLost(group, lease.get().term());
		}
		if (lease.isPresent() && !call.replicated()) {
			// Never acted on: give it back quietly (an announcement would only make
			// every follower try, and fail, at once), so that nobody waits for it to
			// expire.
			try {
				call.run(LeaseScripts.RELEASE,
						script(List.of(group), List.of(candidateId, Long.toString(lease.get().term()), "")));
			}
			catch (LeaderElectionException ex) {
				// It expires on its own.
			}
			throw call.notReplicated();
		}
		return lease;
	}

	/**
	 * Takes the leases as {@link #tryAcquire} would, each group judged alone by the same
	 * Lua (terms, the wait after a data loss, the wait for a holder forced before), in
	 * scripts batched and sent as {@link #renewAll} sends them: a script per
	 * {@value LeaseScripts#MAX_GROUPS} groups (on a cluster, per hash slot), one round
	 * trip, and one more for {@code WAIT} when replicas must acknowledge. Like
	 * {@code tryAcquire}, it announces nothing. When too few replicas acknowledge, the
	 * leases taken are given back, unannounced, and the call fails: none of them was
	 * acted on, and none is left for the others to wait out.
	 */
	@Override
	public Map<String, Lease> tryAcquireAll(Collection<String> groups, String candidateId, Duration leaseDuration,
			Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		List<String> distinct = List.copyOf(new LinkedHashSet<>(groups));
		if (distinct.isEmpty()) {
			return new LinkedHashMap<>();
		}
		List<List<String>> batches = this.calls.batches(distinct, (group) -> key(group, "lease"));
		List<LeaseCalls.Script> runs = new ArrayList<>(batches.size());
		for (List<String> batch : batches) {
			List<String> args = new ArrayList<>(2 + 5 * batch.size());
			args.add(candidateId);
			args.add(millis(leaseDuration));
			for (String group : batch) {
				args.add(seenTerm(group));
				args.add(seenHolder(group));
				args.add(seenLeaseLeft(group));
				args.add(lostWait(group, leaseDuration));
				args.add(givenUp(group, candidateId));
			}
			runs.add(script(batch, args));
		}
		LeaseCalls.Call call = call("acquire the leases of", distinct.size(), timeout, this.waitsForReplicas);
		List<List<Object>> replies = call.runAll(LeaseScripts.ACQUIRE_ALL, runs);
		Duration expiresIn = Duration.ofMillis(Long.parseLong(millis(leaseDuration)));
		Map<String, Lease> taken = new HashMap<>();
		for (int i = 0; i < batches.size(); i++) {
			List<Object> reply = replies.get(i);
			for (int j = 0; j < reply.size(); j += 4) {
				String group = batches.get(i).get(((Long) reply.get(j)).intValue() - 1);
				long term = (Long) reply.get(j + 1);
				if (Long.valueOf(1).equals(reply.get(j + 3))) {
					this.seenTerms.warnLost(group, term);
				}
				this.seenTerms.saw(group, term);
				taken.put(group,
						new Lease(group, candidateId, term, expiresIn, Duration.ofMillis((Long) reply.get(j + 2))));
			}
		}
		if (!taken.isEmpty() && !call.replicated()) {
			giveBack(call, taken.values());
			throw call.notReplicated();
		}
		Map<String, Lease> ordered = new LinkedHashMap<>();
		for (String group : distinct) {
			Lease lease = taken.get(group);
			if (lease != null) {
				ordered.put(group, lease);
			}
		}
		return ordered;
	}

	/**
	 * Gives back, quietly, leases that were taken but that replicas did not acknowledge,
	 * as {@link #tryAcquire} gives back one, within what is left of the call's timeout.
	 */
	private void giveBack(LeaseCalls.Call call, Collection<Lease> taken) {
		List<List<Lease>> batches = this.calls.batches(List.copyOf(taken), (lease) -> key(lease.group(), "lease"));
		List<LeaseCalls.Script> runs = new ArrayList<>(batches.size());
		for (List<Lease> batch : batches) {
			List<String> args = new ArrayList<>(batch.size() * 2);
			for (Lease lease : batch) {
				args.add(lease.holder());
				args.add(Long.toString(lease.term()));
			}
			runs.add(script(batch.stream().map(Lease::group).toList(), args));
		}
		try {
			call.runAll(LeaseScripts.RELEASE_ALL, runs);
		}
		catch (LeaderElectionException ex) {
			// They expire on their own.
		}
	}

	@Override
	public Optional<Lease> renew(Lease lease, Duration leaseDuration, Duration timeout) {
		if (lease.holder() == null) {
			return Optional.empty();
		}
		LeaseCalls.Call call = call("renew the lease of", lease.group(), timeout, this.waitsForReplicas);
		boolean renewed = isOne(call.run(LeaseScripts.RENEW, script(List.of(lease.group()),
				List.of(lease.holder(), Long.toString(lease.term()), millis(leaseDuration)))));
		if (renewed && !call.replicated()) {
			// A failure, not "lost": the leader keeps its belief until its deadline,
			// which counts from the last renewal that replicas did confirm.
			throw call.notReplicated();
		}
		if (!renewed) {
			this.seenTerms.gaveUp(lease.group(), lease.holder(), lease.term());
			return Optional.empty();
		}
		return Optional.of(lease.renewedFor(leaseDuration));
	}

	/**
	 * Renews the leases as {@link #renew} would, each judged alone by its holder and
	 * term, with one script per batch of up to {@value LeaseScripts#MAX_GROUPS} groups:
	 * on a standalone or Sentinel server, any groups share a script; on a cluster, only
	 * groups of one hash slot do, since a script's keys must share a slot. Larger batches
	 * are split because Redis serves nobody else while a script runs. All scripts are
	 * sent before any answer is awaited, so the call costs one round trip (on a cluster,
	 * one per master, all at once), and one more for {@code WAIT} when replicas must
	 * acknowledge. A lease without a holder is never renewed and costs nothing. The call
	 * fails as a whole when a script fails, the timeout passes or too few replicas
	 * acknowledge: leases renewed all the same then only outlast their leader's belief.
	 */
	@Override
	public Map<String, Lease> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout) {
		List<Lease> held = leases.stream().filter((lease) -> lease.holder() != null).toList();
		if (held.isEmpty()) {
			return new LinkedHashMap<>();
		}
		List<List<Lease>> batches = this.calls.batches(held, (lease) -> key(lease.group(), "lease"));
		List<LeaseCalls.Script> runs = new ArrayList<>(batches.size());
		for (List<Lease> batch : batches) {
			List<String> args = new ArrayList<>(1 + batch.size() * 2);
			args.add(millis(leaseDuration));
			for (Lease lease : batch) {
				args.add(lease.holder());
				args.add(Long.toString(lease.term()));
			}
			runs.add(script(batch.stream().map(Lease::group).toList(), args));
		}
		LeaseCalls.Call call = call("renew the leases of", held.size(), timeout, this.waitsForReplicas);
		List<List<Object>> replies = call.runAll(LeaseScripts.RENEW_ALL, runs);
		Set<String> renewed = new HashSet<>();
		for (int i = 0; i < batches.size(); i++) {
			for (Object position : replies.get(i)) {
				renewed.add(batches.get(i).get(((Long) position).intValue() - 1).group());
			}
		}
		if (!renewed.isEmpty() && !call.replicated()) {
			throw call.notReplicated(); // as for one renewal: a failure, not a loss
		}
		held.stream()
			.filter((lease) -> !renewed.contains(lease.group()))
			.forEach((lease) -> this.seenTerms.gaveUp(lease.group(), lease.holder(), lease.term()));
		Map<String, Lease> extended = new LinkedHashMap<>();
		held.stream()
			.filter((lease) -> renewed.contains(lease.group()))
			.forEach((lease) -> extended.put(lease.group(), lease.renewedFor(leaseDuration)));
		return extended;
	}

	/**
	 * Reads the groups as {@link #read} would, in batches sent as {@link #renewAll} sends
	 * them: a script per {@value LeaseScripts#MAX_GROUPS} groups (on a cluster, per hash
	 * slot), one round trip.
	 */
	@Override
	@SuppressWarnings("unchecked")
	public Map<String, Lease> readAll(Collection<String> groups, Duration timeout) {
		List<String> distinct = List.copyOf(new LinkedHashSet<>(groups));
		if (distinct.isEmpty()) {
			return new LinkedHashMap<>();
		}
		List<List<String>> batches = this.calls.batches(distinct, (group) -> key(group, "lease"));
		List<LeaseCalls.Script> runs = batches.stream().map((batch) -> script(batch, List.of())).toList();
		long start = System.nanoTime();
		List<List<Object>> replies = call("read the leases of", distinct.size(), timeout, false)
			.runAll(LeaseScripts.READ_ALL, runs);
		Map<String, List<Object>> byGroup = new HashMap<>();
		for (int i = 0; i < batches.size(); i++) {
			for (int j = 0; j < batches.get(i).size(); j++) {
				byGroup.put(batches.get(i).get(j), (List<Object>) replies.get(i).get(j));
			}
		}
		Map<String, Lease> leases = new LinkedHashMap<>();
		for (String group : distinct) {
			toLease(group, byGroup.get(group)).ifPresent((lease) -> {
				this.seenTerms.sawLease(lease, start);
				leases.put(group, lease);
			});
		}
		return leases;
	}

	/**
	 * Keeps the candidate's entry and lists the live candidates with one script, which
	 * also deletes the entries that have run out.
	 */
	@Override
	public Map<String, Integer> keepCandidateAlive(String candidateId, int weight, Duration ttl, Duration timeout) {
		List<Object> reply = candidateCall("keep alive candidate", candidateId, timeout).run(
				LeaseScripts.KEEP_CANDIDATE_ALIVE, candidateScript(candidateId, Integer.toString(weight), millis(ttl)));
		Map<String, Integer> live = new TreeMap<>();
		for (int i = 0; i < reply.size(); i += 2) {
			live.put(new String((byte[]) reply.get(i), StandardCharsets.UTF_8), ((Long) reply.get(i + 1)).intValue());
		}
		return live;
	}

	@Override
	public void removeCandidate(String candidateId, Duration timeout) {
		candidateCall("remove candidate", candidateId, timeout).run(LeaseScripts.REMOVE_CANDIDATE,
				candidateScript(candidateId));
	}

	@Override
	public void release(Lease lease, Duration timeout) {
		if (lease.holder() != null) {
			this.seenTerms.gaveUp(lease.group(), lease.holder(), lease.term());
			call("release the lease of", lease.group(), timeout, LeaseScripts.RELEASE, false, lease.holder(),
					Long.toString(lease.term()), channel(lease.group()));
		}
	}

	@Override
	public Optional<RunRecord> lastRun(String group, String job, Duration timeout) {
		List<Object> reply = call("read the last run of job '" + job + "' of", group, timeout, false)
			.run(LeaseScripts.READ_RUN, new LeaseCalls.Script(List.of(runKey(group, job)), List.of()));
		return reply.isEmpty() ? Optional.empty() : Optional.of(run(group, job, reply));
	}

	/**
	 * Lists the group's runs with one script, which reads the group's index of jobs and
	 * the run record of each: all keys of the group, so one slot on a Cluster.
	 */
	@Override
	public List<RunRecord> runs(String group, Duration timeout) {
		List<Object> reply = call("read the last runs of the jobs of", group, timeout, false).run(
				LeaseScripts.READ_RUNS, new LeaseCalls.Script(List.of(key(group, "runs")), List.of(runKey(group, ""))));
		List<RunRecord> runs = new ArrayList<>(reply.size() / 7);
		for (int i = 0; i + 7 <= reply.size(); i += 7) {
			runs.add(run(group, text(reply.get(i)), reply.subList(i + 1, i + 7)));
		}
		runs.sort(Comparator.comparing(RunRecord::job));
		return runs;
	}

	/**
	 * Claims a run as {@link RunRecordStore#claimRun} says, waiting for replicas as a
	 * renewal does: a claim that too few replicas acknowledged fails, since a failover
	 * could lose it and let the tick run again.
	 */
	@Override
	public boolean claimRun(Lease lease, RunRecord run, Duration minInterval, Duration timeout) {
		if (!RunRecordStore.isClaimedUnder(lease, run)) {
			return false;
		}
		LeaseCalls.Call call = call("claim tick " + run.tick() + " of job '" + run.job() + "' of", run.group(), timeout,
				this.waitsForReplicas);
		List<String> keys = List.of(key(run.group(), "lease"), key(run.group(), "term"), runKey(run.group(), run.job()),
				key(run.group(), "runs"));
		boolean claimed = isOne(call.run(LeaseScripts.CLAIM_RUN,
				new LeaseCalls.Script(keys,
						List.of(run.holder(), Long.toString(run.term()), Long.toString(run.tick()),
								Long.toString(minInterval.toMillis()), Long.toString(run.started().toEpochMilli()),
								run.outcome().name(), run.job()))));
		if (claimed && !call.replicated()) {
			throw call.notReplicated();
		}
		return claimed;
	}

	@Override
	public boolean finishRun(RunRecord ended, Duration timeout) {
		Instant at = Objects.requireNonNull(ended.ended(), "ended");
		return isOne(call("record the end of tick " + ended.tick() + " of job '" + ended.job() + "' of", ended.group(),
				timeout, false)
			.run(LeaseScripts.FINISH_RUN,
					new LeaseCalls.Script(List.of(runKey(ended.group(), ended.job())),
							List.of(Long.toString(ended.tick()), ended.holder(), Long.toString(ended.term()),
									Long.toString(at.toEpochMilli()), ended.outcome().name()))));
	}

	@Override
	public void forceLeader(String group, String candidateId, Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		call("force a leader for", group, timeout, LeaseScripts.FORCE, false, candidateId, seenTerm(group),
				channel(group));
	}

	@Override
	public void clear(String group, Duration timeout) {
		call("clear the holder of", group, timeout, LeaseScripts.CLEAR, false, channel(group));
	}

	/**
	 * Calls {@code onChange} whenever a release, force or clear of the group is
	 * announced, from one pub/sub connection and one pattern subscription that this store
	 * shares between all its watches, whatever their number. When Redis cannot be
	 * reached, the subscription is retried in the background until it succeeds or the
	 * store is closed.
	 */
	@Override
	public AutoCloseable watch(String group, Runnable onChange) {
		return this.events.watch(channel(group), onChange);
	}

	@Override
	public String backend() {
		return "redis";
	}

	/** Closes the pub/sub connection of the watches, if there is one. */
	@Override
	public void close() {
		this.events.close();
	}

	// Keys

	/**
	 * Returns a key of the group: the group sits inside the hash tag, so one group is one
	 * slot.
	 */
	String key(String group, String suffix) {
		return this.keyPrefix + "{" + hashTag(group) + "}:" + suffix;
	}

	/** Returns a key of the list of live candidates, in the hash slot of the prefix. */
	String candidatesKey(String suffix) {
		return this.keyPrefix + "{" + this.keyPrefix + "}:" + suffix;
	}

	/** The key of a job's run record, in the group's hash slot. */
	private String runKey(String group, String job) {
		return key(group, "run:" + job);
	}

	private String channel(String group) {
		return key(group, "events");
	}

	/**
	 * Encodes a group so that it contains no brace, which would end the hash tag early
	 * (Redis hashes up to the first <code>}</code>) or, for an empty tag, hash each key
	 * whole.
	 */
	static String hashTag(String group) {
		if (group.isEmpty()) {
			return "%";
		}
		StringBuilder tag = new StringBuilder(group.length());
		for (int i = 0; i < group.length(); i++) {
			char c = group.charAt(i);
			switch (c) {
				case '%' -> tag.append("%25");
				case '{' -> tag.append("%7B");
				case '}' -> tag.append("%7D");
				default -> tag.append(c);
			}
		}
		return tag.toString();
	}

	// Results

	private Optional<Lease> toLease(String group, List<Object> reply) {
		if (reply.isEmpty()) {
			return Optional.empty();
		}
		String holder = new String((byte[]) reply.get(0), StandardCharsets.UTF_8);
		long term = (Long) reply.get(1);
		this.seenTerms.saw(group, term);
		return Optional.of(new Lease(group, holder.isEmpty() ? null : holder, term,
				Duration.ofMillis((Long) reply.get(2)), Duration.ofMillis((Long) reply.get(3))));
	}

	private String seenTerm(String group) {
		return Long.toString(this.seenTerms.seen(group));
	}

	private String seenHolder(String group) {
		String holder = this.seenTerms.seenHolder(group);
		return (holder != null) ? holder : "";
	}

	private String lostWait(String group, Duration leaseDuration) {
		return Long.toString(this.seenTerms.lostWait(group, Duration.ZERO, leaseDuration).toMillis());
	}

	private String givenUp(String group, String candidateId) {
		return Long.toString(this.seenTerms.givenUp(group, candidateId));
	}

	private String seenLeaseLeft(String group) {
		return Long.toString(this.seenTerms.seenLeaseLeft(group).toMillis());
	}

	/** The run in the six fields that {@link LeaseScripts#READ_RUN} returns. */
	private static RunRecord run(String group, String job, List<Object> fields) {
		String ended = text(fields.get(4));
		return new RunRecord(group, job, Long.parseLong(text(fields.get(0))), text(fields.get(1)),
				Long.parseLong(text(fields.get(2))), Instant.ofEpochMilli(Long.parseLong(text(fields.get(3)))),
				ended.isEmpty() ? null : Instant.ofEpochMilli(Long.parseLong(ended)),
				RunOutcome.valueOf(text(fields.get(5))));
	}

	private static String text(Object reply) {
		return new String((byte[]) reply, StandardCharsets.UTF_8);
	}

	private static boolean isOne(List<Object> reply) {
		return !reply.isEmpty() && Long.valueOf(1).equals(reply.get(0));
	}

	private static String millis(Duration duration) {
		return Long.toString(Math.max(1, duration.toMillis()));
	}

	private List<Object> call(String operation, String group, Duration timeout, LeaseScripts script, boolean pinned,
			String... args) {
		return call(operation, group, timeout, pinned).run(script, script(List.of(group), List.of(args)));
	}

	private LeaseCalls.Call call(String operation, String group, Duration timeout, boolean waitsForReplicas) {
		Objects.requireNonNull(group, "group");
		return this.calls.call(operation + " group '" + group + "'", "keys " + key(group, "*"), timeout,
				waitsForReplicas);
	}

	private LeaseCalls.Call call(String operation, int groups, Duration timeout, boolean waitsForReplicas) {
		return this.calls.call(operation + " " + groups + " groups", "keys " + this.keyPrefix + "{<group>}:*", timeout,
				waitsForReplicas);
	}

	private LeaseCalls.Call candidateCall(String operation, String candidateId, Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		return this.calls.call(operation + " '" + candidateId + "'",
				"keys " + candidatesKey("candidates") + " and " + candidatesKey("candidate-weights"), timeout, false);
	}

	private LeaseCalls.Script candidateScript(String... args) {
		return new LeaseCalls.Script(List.of(candidatesKey("candidates"), candidatesKey("candidate-weights")),
				List.of(args));
	}

	/**
	 * A run of a script on the groups' keys, the lease and the record of each in turn.
	 */
	private LeaseCalls.Script script(List<String> groups, List<String> args) {
		List<String> keys = new ArrayList<>(groups.size() * 2);
		for (String group : groups) {
			keys.add(key(group, "lease"));
			keys.add(key(group, "term"));
		}
		return new LeaseCalls.Script(keys, args);
	}

}
