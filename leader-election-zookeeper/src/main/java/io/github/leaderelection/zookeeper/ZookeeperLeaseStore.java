package io.github.leaderelection.zookeeper;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.spi.AdminLeaseStore;
import io.github.leaderelection.spi.BatchLeaseStore;
import io.github.leaderelection.spi.CandidateListStore;
import io.github.leaderelection.spi.ChangeFeedStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.spi.RunRecordStore;
import io.github.leaderelection.spi.SeenTerms;
import io.github.leaderelection.spi.StoreCall;
import io.github.leaderelection.spi.StoreNames;
import io.github.leaderelection.spi.WatcherRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Watcher;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lease store on ZooKeeper, through Curator, in which candidates queue as ephemeral
 * sequential nodes, each watching the one ahead of it, and a lease lasts as long as its
 * holder's session.
 *
 * <p>
 * Each group is a persistent node {@code <basePath>/<group, percent-encoded>}. Its
 * children are the queue: one node per candidate, holding the candidate id. Its data is
 * the last {@link Grant}. Every grant, renewal, release, force and clear is one
 * multi-operation that checks the version of that data, so each grant adds exactly one to
 * the term, all candidates read the same term, and terms survive restarts (they start at
 * the group node's creation time in microseconds, so they keep growing even if
 * ZooKeeper's data is wiped and the node created again).
 *
 * <ul>
 * <li>The lease is free once the previous holder's node is gone (released, session ended,
 * or re-queued by a forced change), and a queued candidate that asks then takes it. Every
 * node but the holder's watches only its predecessor, so the one queued right behind the
 * holder learns within milliseconds and nobody else wakes up; the others learn at their
 * next read. Not only that one may take it: with balancing, it may be a candidate at its
 * share, which holds back so that one below its share takes the lease, and that one can
 * be anywhere in the queue.</li>
 * <li>Expiry is the end of the holder's session: {@link Lease#expiresIn()} reads as the
 * holder's lease duration while its node lives, zero once it is gone. A renewal is a
 * multi-operation committed by the ZooKeeper leader, so it also proves that the session
 * was alive at that instant; the session then lives at least a session timeout longer,
 * while the leader believes at most a renew deadline longer. Hence {@link #tryAcquire}
 * grants only when the negotiated session timeout is at least the lease duration (which
 * exceeds the renew deadline).</li>
 * <li>A renewal fails after any SUSPENDED since the grant, so the leader stops at once,
 * unless {@code keepLeadingWhileSuspended}. A grant requires the node's ephemeral owner
 * to be the current session (CURATOR-696); a create whose answer arrives after its call
 * gave up deletes the node it made and nothing else (CURATOR-498); watch events of an
 * ended session are ignored.</li>
 * </ul>
 *
 * <p>
 * Candidates queue through {@link #join} (the engine joins when it starts competing), so
 * that followers wait in line, each watching its predecessor, from the start. The store
 * keeps a joined candidate's place until {@link #leave}: a place lost with a session is
 * taken again at the next {@link #read}, and a holder that releases (a yield, a leader
 * that gave up) queues again at the end. A candidate that never joined is queued by
 * {@link #tryAcquire} and leaves the queue when it releases. {@link #read} reports the
 * lease as it is.
 *
 * <p>
 * {@link #renewAll} renews a node's leases with one multi-operation (see
 * {@link Renewals}), {@link #tryAcquireAll} takes them with one read and one
 * multi-operation of grants (see {@link Acquisitions}), and {@link #readAll} reads its
 * groups with one read-only multi-operation, as long as the request and its answer fit in
 * half a packet ({@code jute.maxbuffer}); beyond that they take more requests, all sent
 * at once. A group that has not changed since {@link #readAll} last read it, as a
 * persistent recursive watch on the base path tells, is answered without a request (see
 * {@link WatchedGroups}).
 *
 * <p>
 * The list of live candidates that balancing reads ({@link #keepCandidateAlive}) is an
 * ephemeral node per candidate, which lives as long as the session of the store that
 * announced it (see {@link LiveCandidates}).
 */
public class ZookeeperLeaseStore
		implements BatchLeaseStore, CandidateListStore, ChangeFeedStore, AdminLeaseStore, RunRecordStore {

	/** The base path used unless another is given. */
	public static final String DEFAULT_BASE_PATH = "/leader-election";

	/** Segments of letters, digits, '_', '.' and '-', not starting with '.' or '-'. */
	static final String BASE_PATH_PATTERN = "^(/[A-Za-z_][A-Za-z0-9_.-]{0,99})+$";

	private static final Pattern BASE_PATH = Pattern.compile(BASE_PATH_PATTERN);

	private static final Duration PARTICIPANTS_TIMEOUT = Duration.ofSeconds(5);

	private static final Logger logger = LoggerFactory.getLogger(ZookeeperLeaseStore.class);

	/** A version no node has: a check or write with it always fails. */
	private static final int NO_VERSION = -2;

	private final CuratorFramework client;

	private final ConnectionStateListener connectionListener = this::stateChanged;

	private final CuratorCalls zookeeper;

	private final String basePath;

	private final GroupPaths paths;

	private final boolean keepLeadingWhileSuspended;

	private final Renewals renewals;

	private final RunNodes runs;

	private final GroupReads reads;

	private final Acquisitions acquisitions;

	private final WatchedGroups watched;

	private final LiveCandidates candidates;

	private final SessionMarks marks;

	/** This store's candidates, by group and candidate id. */
	private final Map<String, Map<String, QueueMember>> members = new ConcurrentHashMap<>();

	private final WatcherRegistry watchers = new WatcherRegistry();

	/**
	 * The terms seen granted: finding a group never granted, or granted in a lower term,
	 * means that ZooKeeper lost its data or that it was changed by hand.
	 */
	private final SeenTerms seenTerms = new SeenTerms("zookeeper");

	/** The last connection state reported, or null before the first report. */
	private volatile @Nullable ConnectionState connection;

	/**
	 * How many times the connection was SUSPENDED or LOST: a grant does not survive one.
	 */
	private final AtomicLong suspensions = new AtomicLong();

	public ZookeeperLeaseStore(CuratorFramework client) {
		this(client, DEFAULT_BASE_PATH, false);
	}

	/**
	 * Creates a store on a client, started or not.
	 * @param basePath the node under which the groups live
	 * @param keepLeadingWhileSuspended whether a leader keeps leading while the
	 * connection is SUSPENDED, until it is LOST or the leader's renew deadline passes.
	 * With Curator's LeaderLatch this policy gave two leaders (CURATOR-460), because the
	 * time until LOST was counted from SUSPENDED, which itself comes up to two thirds of
	 * a session timeout after the last contact. Here the belief ends at the renew
	 * deadline counted from the start of the last successful renewal, which the server
	 * saw, and the session outlives it by at least the session timeout minus the renew
	 * deadline; the remaining risk is clock rates that differ by more than that.
	 * @throws IllegalArgumentException if the base path does not match
	 * {@value #BASE_PATH_PATTERN}
	 */
	public ZookeeperLeaseStore(CuratorFramework client, String basePath, boolean keepLeadingWhileSuspended) {
		this.client = Objects.requireNonNull(client, "client");
		this.zookeeper = new CuratorCalls(client);
		this.basePath = requireValidBasePath(basePath);
		this.paths = new GroupPaths(this.basePath);
		this.keepLeadingWhileSuspended = keepLeadingWhileSuspended;
		this.renewals = new Renewals(this.zookeeper, this.paths);
		this.runs = new RunNodes(this.zookeeper, this.paths);
		this.reads = new GroupReads(this.zookeeper, this.paths);
		this.marks = new SessionMarks(this.zookeeper, this.paths);
		this.acquisitions = new Acquisitions(this.zookeeper, this.paths, this.reads, this.seenTerms, this.marks,
				this.suspensions::get, this::armWatch, this.watchers::notifyGroup);
		this.candidates = new LiveCandidates(this.zookeeper, this.paths);
		this.watched = new WatchedGroups(client, this.basePath, this.reads);
		client.getConnectionStateListenable().addListener(this.connectionListener);
		if (client.getZookeeperClient().isConnected()) {
			this.watched.watch();
		}
	}

	static String requireValidBasePath(String basePath) {
		StoreNames.requireMatching("base path", basePath, BASE_PATH);
		if (basePath.equals("/zookeeper") || basePath.startsWith("/zookeeper/")) {
			throw StoreNames.invalid("base path", basePath, "/zookeeper is ZooKeeper's own");
		}
		return basePath;
	}

	@Override
	public Optional<Lease> read(String group, Duration timeout) {
		return execute("read the lease of", group, timeout,
				(deadline) -> lease(group, view(group, deadline), deadline));
	}

	/**
	 * Reads the groups as {@link #read} does, with one read-only multi-operation for all
	 * of them where it fits in half a packet: a group's data, then its queue. Taking a
	 * lost place again, or watching another node, costs a request more for that group
	 * alone.
	 */
	@Override
	public Map<String, Lease> readAll(Collection<String> groups, Duration timeout) {
		return run("read " + groups.size() + " groups", timeout, (deadline) -> {
			Map<String, Lease> leases = new LinkedHashMap<>();
			for (Map.Entry<String, @Nullable GroupView> read : this.watched
				.read(new LinkedHashSet<>(groups), isConnected(), deadline)
				.entrySet()) {
				GroupView view = (read.getValue() != null) ? granted(read.getKey(), read.getValue()) : null;
				lease(read.getKey(), view, deadline).ifPresent((lease) -> leases.put(read.getKey(), lease));
			}
			return leases;
		});
	}

	private Optional<Lease> lease(String group, @Nullable GroupView view, long deadline) throws Exception {
		if (requeueLostPlaces(group, view, deadline)) {
			view = view(group, deadline);
		}
		if (view == null) {
			return Optional.empty();
		}
		for (QueueMember member : groupMembers(group)) {
			armWatch(member, view);
		}
		return (view.grant().term() == 0) ? Optional.empty() : Optional.of(view.toLease(group));
	}

	/**
	 * Queues again the joined candidates whose place is gone (their session ended, or
	 * ZooKeeper lost its data).
	 * @return whether any was queued
	 */
	private boolean requeueLostPlaces(String group, @Nullable GroupView view, long deadline) throws Exception {
		boolean requeued = false;
		for (QueueMember member : groupMembers(group)) {
			if (member.joined && (view == null || !view.isQueued(member.node))) {
				// Held across the calls: a member's place changes in one piece
				// (QueueMember).
				synchronized (member) {
					// Read again under the lock: a join or an acquire may have queued it
					// since, and queueing twice would leave a node nobody answers for.
					GroupView now = view(group, deadline);
					if (!member.left && (now == null || !now.isQueued(member.node))) {
						enqueue(member, deadline);
						requeued = true;
					}
				}
			}
		}
		return requeued;
	}

	@Override
	public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		return execute("acquire the lease of", group, timeout, (deadline) -> {
			requireSafeSession(leaseDuration);
			QueueMember member = this.members.computeIfAbsent(group, (key) -> new ConcurrentHashMap<>())
				.computeIfAbsent(candidateId, (key) -> new QueueMember(group, candidateId, false));
			// Held across the calls: a member's place and grant change in one piece
			// (QueueMember).
			synchronized (member) {
				// A candidate that left while this call was under way takes no place.
				return member.left ? Optional.<Lease>empty() : acquire(member, leaseDuration, deadline);
			}
		});
	}

	private Optional<Lease> acquire(QueueMember member, Duration leaseDuration, long deadline) throws Exception {
		long session = this.marks.mark(deadline);
		GroupView view = view(member.group, deadline);
		boolean joined = false;
		if (view == null || !view.isQueued(member.node)) {
			enqueue(member, deadline);
			joined = true;
			view = Objects.requireNonNull(view(member.group, deadline), "group node");
		}
		Grant last = view.grant();
		String node = Objects.requireNonNull(member.node);
		boolean mine = member.candidateId.equals(last.holder()) && node.equals(last.node());
		if (view.hasLiveHolder() && !mine) {
			member.term = 0;
			armWatch(member, view);
			if (joined) {
				// Queued now: let the elector read the truth at once.
				this.watchers.notifyGroup(member.group);
			}
			return Optional.empty();
		}
		long suspensionsBefore = this.suspensions.get();
		// CURATOR-696: after a new session, never grant on a node that this session does
		// not own.
		CuratorEvent exists = this.zookeeper.exists(this.paths.node(member.group, node), deadline);
		if (exists.getStat() == null || exists.getStat().getEphemeralOwner() != session) {
			member.node = null;
			return Optional.empty();
		}
		Acquisitions.Plan plan = Acquisitions.plan(member, node, session, view,
				this.marks.holderMayBelieve(view, member.candidateId, session, deadline), leaseDuration,
				this.seenTerms);
		Grant grant = plan.grant();
		CuratorEvent result = this.zookeeper.transaction(deadline,
				this.zookeeper.check(this.paths.node(member.group, node)),
				this.zookeeper.setData(this.paths.group(member.group), view.version(), grant.bytes()));
		if (CuratorCalls.isConflict(result)) {
			member.term = 0;
			return Optional.empty();
		}
		if (plan.lost()) {
			this.seenTerms.warnLost(member.group, grant.term());
		}
		member.granted(grant, session, suspensionsBefore);
		this.seenTerms.saw(member.group, grant.term());
		armWatch(member, view); // now the holder's: it watches its own node
		// The group node's version: renewals and the release check it.
		return Optional.of(new Lease(member.group, member.candidateId, grant.term(), leaseDuration,
				Duration.ofMillis(grant.quietMillis()), CuratorCalls.newVersion(result)));
	}

	/**
	 * Takes the leases as {@link #tryAcquire} takes one, with one read of all the groups,
	 * the missing queue nodes created at once, and one multi-operation for the grants
	 * where it fits in half a packet (see {@link Acquisitions}).
	 */
	@Override
	public Map<String, Lease> tryAcquireAll(Collection<String> groups, String candidateId, Duration leaseDuration,
			Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		if (groups.isEmpty()) {
			return Map.of();
		}
		return run("take " + groups.size() + " leases", timeout, (deadline) -> {
			requireSafeSession(leaseDuration);
			List<QueueMember> batch = new ArrayList<>();
			for (String group : new LinkedHashSet<>(groups)) {
				batch.add(this.members
					.computeIfAbsent(Objects.requireNonNull(group, "group"), (key) -> new ConcurrentHashMap<>())
					.computeIfAbsent(candidateId, (key) -> new QueueMember(group, candidateId, false)));
			}
			Map<String, Lease> taken = this.acquisitions.acquire(batch, leaseDuration, deadline);
			Map<String, Lease> inOrder = new LinkedHashMap<>();
			groups.stream().filter(taken::containsKey).forEach((group) -> inOrder.put(group, taken.get(group)));
			return inOrder;
		});
	}

	@Override
	public Optional<Lease> renew(Lease lease, Duration leaseDuration, Duration timeout) {
		QueueMember member = member(lease);
		if (member == null) {
			return Optional.empty();
		}
		return execute("renew the lease of", lease.group(), timeout, (deadline) -> Optional
			.ofNullable(renewHeld(List.of(lease), leaseDuration, deadline).get(lease.group())));
	}

	/**
	 * Renews the leases as {@link #renew} renews one, with one multi-operation for all of
	 * them where it fits in half a packet (see {@link Renewals}).
	 */
	@Override
	public Map<String, Lease> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout) {
		return run("renew " + leases.size() + " leases", timeout,
				(deadline) -> renewHeld(leases, leaseDuration, deadline));
	}

	private Map<String, Lease> renewHeld(Collection<Lease> leases, Duration leaseDuration, long deadline)
			throws Exception {
		Map<QueueMember, Lease> held = new HashMap<>();
		for (Lease lease : leases) {
			QueueMember member = member(lease);
			if (member != null && mayRenew(member)) {
				held.putIfAbsent(member, lease);
			}
		}
		if (!held.isEmpty()) {
			keepMarked(deadline);
		}
		Map<String, Lease> renewed = this.renewals.renew(held, leaseDuration, deadline);
		Map<String, Lease> inOrder = new LinkedHashMap<>();
		leases.stream()
			.map(Lease::group)
			.filter(renewed::containsKey)
			.forEach((group) -> inOrder.put(group, renewed.get(group)));
		return inOrder;
	}

	/**
	 * Creates this session's mark again if it was deleted by hand (see
	 * {@link SessionMarks}). A renewal does not depend on it: the mark matters only if
	 * the holder's node is deleted by hand too.
	 */
	private void keepMarked(long deadline) {
		try {
			this.marks.mark(deadline);
		}
		catch (Exception ex) {
			logger.debug("Could not mark this store's session; the renewal goes on", ex);
		}
	}

	/**
	 * The checks of a renewal that need no lock. Even if the connection is back by now:
	 * the safe default stops on every suspension, as Curator's LeaderLatch does, and the
	 * candidate acquires again with a new term.
	 */
	private boolean mayRenew(QueueMember member) {
		ConnectionState state = this.connection;
		if (this.keepLeadingWhileSuspended && !isConnected() && state != ConnectionState.LOST) {
			throw new LeaderElectionException("Not connected to ZooKeeper (" + state + "); keeping the lease until "
					+ "the renew deadline, as keepLeadingWhileSuspended asks");
		}
		if (!isConnected() || (!this.keepLeadingWhileSuspended && this.suspensions.get() != member.suspensions)) {
			member.term = 0;
			return false;
		}
		return true;
	}

	@Override
	public Optional<RunRecord> lastRun(String group, String job, Duration timeout) {
		return execute("read the last run of job '" + job + "' of", group, timeout,
				(deadline) -> this.runs.read(group, job, deadline));
	}

	@Override
	public List<RunRecord> runs(String group, Duration timeout) {
		return execute("read the last runs of the jobs of", group, timeout,
				(deadline) -> this.runs.list(group, deadline));
	}

	/**
	 * Claims a run as {@link RunRecordStore#claimRun} says, with the checks of a renewal
	 * in the same multi-operation (see {@link RunNodes}): only the holder's own store
	 * claims, on a node of its current session, and not after a suspension unless
	 * {@code keepLeadingWhileSuspended}.
	 */
	@Override
	public boolean claimRun(Lease lease, RunRecord run, Duration minInterval, Duration timeout) {
		QueueMember member = member(lease);
		if (member == null || !RunRecordStore.isClaimedUnder(lease, run)) {
			return false;
		}
		return execute("claim tick " + run.tick() + " of job '" + run.job() + "' of", lease.group(), timeout,
				(deadline) -> {
					// Held across the claim, as a renewal holds it: a grant, release or
					// new session of the member waits until the claim naming its node is
					// answered.
					synchronized (member) {
						String node = member.node;
						long session = this.zookeeper.client().getZookeeperClient().getZooKeeper().getSessionId();
						if (member.term != lease.term() || node == null || member.session != session || !isConnected()
								|| (!this.keepLeadingWhileSuspended && this.suspensions.get() != member.suspensions)) {
							return false;
						}
						return this.runs.claim(node, lease, run, minInterval, deadline);
					}
				});
	}

	@Override
	public boolean finishRun(RunRecord ended, Duration timeout) {
		return execute("record the end of tick " + ended.tick() + " of job '" + ended.job() + "' of", ended.group(),
				timeout, (deadline) -> this.runs.finish(ended, deadline));
	}

	/**
	 * Clears the holder and deletes its node, if the group still names this lease's
	 * holder and term, through any store. If the holder was still waiting out an earlier
	 * holder, the next one waits as long.
	 */
	@Override
	public void release(Lease lease, Duration timeout) {
		String holder = lease.holder();
		if (holder == null) {
			return;
		}
		QueueMember member = member(lease);
		this.seenTerms.gaveUp(lease.group(), holder, lease.term());
		execute("release the lease of", lease.group(), timeout, (deadline) -> {
			if (member == null) {
				return release(lease, holder, null, deadline);
			}
			// Held across the calls: a member's place and grant change in one piece
			// (QueueMember).
			synchronized (member) {
				return release(lease, holder, member, deadline);
			}
		});
	}

	private @Nullable Void release(Lease lease, String holder, @Nullable QueueMember member, long deadline)
			throws Exception {
		if (member != null && member.term == lease.term() && member.node != null
				&& releaseHeld(member, lease, deadline)) {
			return null;
		}
		GroupView view = view(lease.group(), deadline);
		if (view == null || !holder.equals(view.grant().holder()) || view.grant().term() != lease.term()) {
			return null;
		}
		Grant last = view.grant();
		boolean ours = member != null && member.term == lease.term();
		long quietMillis = (ours && member.isActive()) ? 0 : last.quietMillis();
		List<CuratorOp> operations = new ArrayList<>();
		operations.add(this.zookeeper.setData(this.paths.group(lease.group()), view.version(),
				Grant.none(last.term(), last.leaseMillis(), quietMillis).bytes()));
		if (view.hasLiveHolder()) {
			operations.add(this.zookeeper.delete(this.paths.node(lease.group(), Objects.requireNonNull(last.node()))));
		}
		if (CuratorCalls.isConflict(this.zookeeper.transaction(deadline, operations.toArray(CuratorOp[]::new)))
				|| member == null || !Objects.equals(member.node, last.node())) {
			return null;
		}
		released(member, deadline);
		return null;
	}

	/**
	 * Releases this store's own grant in one round trip, without reading the group first:
	 * the group node's version is the lease's, from the grant or the last renewal that
	 * wrote. A leader that gave up because its link is slow must give up its place over
	 * that same link, and a request sent is applied by the server even when its answer
	 * comes after this call timed out.
	 * @return whether it was released; false when the group changed since (a forced
	 * change), in which case the caller reads the group and decides again
	 */
	private boolean releaseHeld(QueueMember member, Lease lease, long deadline) throws Exception {
		String node = Objects.requireNonNull(member.node);
		long quietMillis = member.isActive() ? 0 : member.quietMillis;
		Grant released = Grant.none(member.term, member.leaseMillis, quietMillis);
		CuratorEvent result = this.zookeeper.transaction(deadline,
				this.zookeeper.setData(this.paths.group(member.group), version(lease), released.bytes()),
				this.zookeeper.delete(this.paths.node(member.group, node)));
		if (CuratorCalls.isConflict(result)) {
			return false;
		}
		released(member, deadline);
		return true;
	}

	/**
	 * The group node's version that a lease this store handed out carries. A version no
	 * node can have stands for one out of range, as -1 would match any.
	 */
	static int version(Lease lease) {
		long version = lease.version();
		return (version >= 0 && version <= Integer.MAX_VALUE) ? (int) version : NO_VERSION;
	}

	/**
	 * Keeps the candidate on the list of live candidates as an ephemeral node of this
	 * store's session, holding its weight (see {@link LiveCandidates}). The entry lasts
	 * as long as the session, not {@code ttl}, which is not used: the session is the
	 * store's judgement of liveness, for candidates as for leases. ZooKeeper ends it a
	 * session timeout after the client's last contact, by the servers' clock, or at once
	 * when the client closes; so a crashed candidate stays listed for up to a session
	 * timeout. One request (a getChildren) while the session and the weight stay the
	 * same; a write more after a new session or with a new weight.
	 * @throws LeaderElectionException when the connection is SUSPENDED or LOST (the list
	 * cannot be read then), or ZooKeeper did not answer within the timeout
	 * @throws IllegalArgumentException if the candidate id is not valid Unicode
	 */
	@Override
	public Map<String, Integer> keepCandidateAlive(String candidateId, int weight, Duration ttl, Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		return run("keep candidate '" + candidateId + "' alive", timeout, (deadline) -> {
			// At once rather than at the timeout: nothing can be listed until the client
			// is connected again (the entry lives on as long as the session does).
			requireConnected();
			return this.candidates.keepAlive(candidateId, weight, deadline);
		});
	}

	/**
	 * Deletes the node that this store created for the candidate in its current session,
	 * and forgets it. A candidate that this store did not announce is left alone: its
	 * node goes with the session of the store that did.
	 */
	@Override
	public void removeCandidate(String candidateId, Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		run("remove candidate '" + candidateId + "'", timeout, (deadline) -> {
			this.candidates.remove(candidateId, deadline);
			return null;
		});
	}

	/**
	 * Names a running candidate as holder with a new term: the nodes ahead of it are
	 * deleted (their candidates queue again at the end), so that it is the lowest, and it
	 * acts only after the lease duration of the previous holder, whose renewals fail from
	 * now on.
	 * @throws IllegalStateException if the candidate has no node in the group's queue:
	 * ZooKeeper has no clock to expire a lease named for a candidate that never shows up
	 */
	@Override
	public void forceLeader(String group, String candidateId, Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		execute("force a leader for", group, timeout, (deadline) -> {
			for (int attempt = 1;; attempt++) {
				GroupView view = view(group, deadline);
				List<String> queue = (view != null) ? view.queue() : List.of();
				List<@Nullable String> ids = candidateIds(group, queue, deadline);
				int index = ids.indexOf(candidateId);
				if (view == null || index < 0) {
					throw new IllegalStateException(
							"Candidate '" + candidateId + "' does not take part in the election of " + "group '" + group
									+ "' (participants: " + ids.stream().filter(Objects::nonNull).toList()
									+ "): only a running candidate can be forced to lead");
				}
				String target = queue.get(index);
				if (candidateId.equals(view.grant().holder()) && target.equals(view.grant().node())) {
					return null;
				}
				CuratorEvent targetNode = this.zookeeper.exists(this.paths.node(group, target), deadline);
				long session = (targetNode.getStat() != null) ? targetNode.getStat().getEphemeralOwner() : 0;
				Grant forced = new Grant(view.nextTerm(), candidateId, target, session, view.grant().leaseMillis(),
						view.quietAfterChange());
				List<CuratorOp> operations = new ArrayList<>();
				operations.add(this.zookeeper.setData(this.paths.group(group), view.version(), forced.bytes()));
				operations.add(this.zookeeper.check(this.paths.node(group, target)));
				for (String ahead : queue.subList(0, index)) {
					operations.add(this.zookeeper.delete(this.paths.node(group, ahead)));
				}
				if (!CuratorCalls
					.isConflict(this.zookeeper.transaction(deadline, operations.toArray(CuratorOp[]::new)))) {
					return null;
				}
				if (attempt == 3) {
					throw new LeaderElectionException("The election of group '" + group + "' kept changing; try again");
				}
			}
		});
	}

	/**
	 * Removes the holder, keeping the term. The holder's node is deleted (it queues again
	 * at the end), and the next holder acts only after the previous holder's lease
	 * duration.
	 */
	@Override
	public void clear(String group, Duration timeout) {
		execute("clear the holder of", group, timeout, (deadline) -> {
			for (int attempt = 1;; attempt++) {
				GroupView view = view(group, deadline);
				if (view == null || view.grant().holder() == null) {
					return null;
				}
				Grant last = view.grant();
				Grant cleared = Grant.none(last.term(), last.leaseMillis(), view.quietAfterChange());
				List<CuratorOp> operations = new ArrayList<>();
				operations.add(this.zookeeper.setData(this.paths.group(group), view.version(), cleared.bytes()));
				if (view.hasLiveHolder()) {
					operations.add(this.zookeeper.delete(this.paths.node(group, Objects.requireNonNull(last.node()))));
				}
				if (!CuratorCalls
					.isConflict(this.zookeeper.transaction(deadline, operations.toArray(CuratorOp[]::new)))) {
					return null;
				}
				if (attempt == 3) {
					throw new LeaderElectionException("The election of group '" + group + "' kept changing; try again");
				}
			}
		});
	}

	/**
	 * The candidate ids queued in a group, in the order they hear of a free lease: the
	 * holder, if any, is usually first (a candidate further back may have taken the lease
	 * while the ones ahead held back for balancing).
	 */
	public List<String> participants(String group) {
		return participants(group, PARTICIPANTS_TIMEOUT);
	}

	/**
	 * The candidate ids queued in a group, as {@link #participants(String)} lists them.
	 */
	public List<String> participants(String group, Duration timeout) {
		return execute("list the participants of", group, timeout, (deadline) -> {
			GroupView view = view(group, deadline);
			List<@Nullable String> ids = (view != null) ? candidateIds(group, view.queue(), deadline) : List.of();
			return ids.stream().filter(Objects::nonNull).map(Objects::requireNonNull).toList();
		});
	}

	/**
	 * Calls back when this store's candidate in the group may take over or lost its node:
	 * the node it watches (its predecessor, or its own while it leads) was deleted, or
	 * the connection changed, or it was queued.
	 */
	@Override
	public AutoCloseable watch(String group, Runnable onChange) {
		return this.watchers.add(group, onChange);
	}

	/**
	 * Queues the candidate at the end of the group's queue, unless it is queued already,
	 * and keeps it queued until {@link #leave}. The candidate is recorded before the
	 * write, so that a join that fails (not connected) is completed by the next
	 * {@link #read}.
	 */
	@Override
	public void join(String group, String candidateId, Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		QueueMember member = this.members.computeIfAbsent(group, (key) -> new ConcurrentHashMap<>())
			.compute(candidateId, (key, existing) -> (existing == null || existing.left)
					? new QueueMember(group, candidateId, true) : existing.join());
		execute("join the election of", group, timeout, (deadline) -> {
			// The session's first join marks it (SessionMarks), so that its first grant,
			// which is timed, costs no request more.
			this.marks.mark(deadline);
			// Held across the calls: a member's place changes in one piece (QueueMember).
			synchronized (member) {
				GroupView view = view(group, deadline);
				if (!member.left && (view == null || !view.isQueued(member.node))) {
					enqueue(member, deadline);
					// Read again only for a group created now: otherwise the nodes read
					// came before this one, which watches the last of them (one queued
					// meanwhile is found at the next read).
					view = (view != null) ? view.withQueued(Objects.requireNonNull(member.node))
							: view(group, deadline);
				}
				if (view != null) {
					armWatch(member, view);
				}
			}
			// Queued now: let the elector read where it stands.
			this.watchers.notifyGroup(group);
			return null;
		});
	}

	/**
	 * Gives up the candidate's place in the queue, and takes none again. A lease it holds
	 * stays until released (or until its session ends).
	 */
	@Override
	public void leave(String group, String candidateId, Duration timeout) {
		Map<String, QueueMember> groupMembers = this.members.get(group);
		QueueMember member = (groupMembers != null) ? groupMembers.get(candidateId) : null;
		if (member == null) {
			return;
		}
		synchronized (member) {
			member.left = true;
			if (member.term == 0) {
				dropPlace(member);
			}
		}
	}

	@Override
	public String backend() {
		return "zookeeper";
	}

	/**
	 * Stops listening to the client's connection states. The client is the application's:
	 * it stays open, and the queue nodes of candidates still in it end with its session.
	 */
	@Override
	public void close() {
		this.client.getConnectionStateListenable().removeListener(this.connectionListener);
		this.watched.close();
	}

	// Queue membership and watches

	private void enqueue(QueueMember member, long deadline) throws Exception {
		member.node = null;
		member.term = 0;
		member.watched.set(null);
		String created = this.zookeeper.createEphemeralSequential(this.paths.group(member.group) + "/lease-",
				member.candidateId.getBytes(StandardCharsets.UTF_8), deadline);
		member.node = ZKPaths.getNodeFromPath(created);
	}

	/**
	 * After its grant was released: queue again, behind the others, while the candidate
	 * still competes (a yield, a leader that gave up); a candidate that never joined, or
	 * left, leaves the queue with its release.
	 */
	private void released(QueueMember member, long deadline) {
		member.node = null;
		member.term = 0;
		if (!member.joined || member.left) {
			return;
		}
		try {
			enqueue(member, deadline);
		}
		catch (Exception ex) {
			// The next read queues it.
			logger.debug("Could not queue candidate '{}' again in group '{}'", member.candidateId, member.group, ex);
		}
	}

	private void dropPlace(QueueMember member) {
		String node = member.node;
		member.node = null;
		if (node != null) {
			this.zookeeper.deleteInBackground(this.paths.node(member.group, node));
		}
	}

	/**
	 * Watches the member's predecessor, or its own node if it is first; one watch at a
	 * time.
	 */
	private void armWatch(QueueMember member, GroupView view) {
		int index = (member.node != null) ? view.queue().indexOf(member.node) : -1;
		if (index < 0) {
			return;
		}
		// A holder watches its own node, which a forced change deletes; it need not be
		// the lowest. Anyone else watches its predecessor.
		boolean holds = view.grant().holder() != null && Objects.equals(member.node, view.grant().node());
		String target = view.queue().get(holds ? index : Math.max(0, index - 1));
		String previous = member.watched.get();
		if (target.equals(previous) || !member.watched.compareAndSet(previous, target)) {
			return;
		}
		Watcher watcher = (event) -> {
			// Connection events (type None) are not about the node; the watches of an
			// expired session are forgotten by stateChanged.
			if (event.getType() != Watcher.Event.EventType.None && member.stopWatching(target)) {
				this.watchers.notifyGroup(member.group);
			}
		};
		try {
			// getData rather than exists: no watch stays behind on a node that is already
			// gone.
			this.zookeeper.watch(this.paths.node(member.group, target), watcher, (client, event) -> {
				if (!CuratorCalls.isOk(event) && member.stopWatching(target)
						&& event.getResultCode() == Code.NONODE.intValue()) {
					this.watchers.notifyGroup(member.group);
				}
			});
		}
		catch (Exception ex) {
			member.stopWatching(target);
		}
	}

	private void stateChanged(CuratorFramework client, ConnectionState state) {
		if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
			this.suspensions.incrementAndGet();
		}
		this.connection = state;
		this.watched.connectionChanged();
		if (isConnected()) {
			this.watched.watch();
		}
		if (state == ConnectionState.LOST) {
			this.members.values().forEach((group) -> group.values().forEach((member) -> member.watched.set(null)));
		}
		// Every elector re-evaluates at once: on SUSPENDED a leader stops now, not at its
		// next renewal.
		this.watchers.notifyEveryGroup();
	}

	private boolean isConnected() {
		ConnectionState state = this.connection;
		return (state != null) ? (state == ConnectionState.CONNECTED || state == ConnectionState.RECONNECTED)
				: this.zookeeper.client().getZookeeperClient().isConnected();
	}

	private void requireConnected() {
		if (!isConnected()) {
			throw new LeaderElectionException("Not connected to ZooKeeper (" + this.connection + ")");
		}
	}

	private void requireSafeSession(Duration leaseDuration) throws Exception {
		requireConnected();
		int sessionTimeout = this.zookeeper.client().getZookeeperClient().getZooKeeper().getSessionTimeout();
		if (sessionTimeout < leaseDuration.toMillis()) {
			throw new IllegalStateException("The ZooKeeper session timeout (" + sessionTimeout + " ms, as negotiated "
					+ "with the server) is shorter than the lease duration (" + leaseDuration
					+ "), so a leader cut off "
					+ "from ZooKeeper could still believe it leads when its session expires and another candidate takes "
					+ "over. Raise the session timeout to at least the lease duration (the server caps it at its "
					+ "maxSessionTimeout, 20 ticks by default), or shorten the lease duration.");
		}
	}

	// Reading

	private @Nullable GroupView view(String group, long deadline) throws Exception {
		// One read-only multi-operation: the data first, then the queue (see GroupReads).
		GroupView view = this.reads.read(List.of(group), deadline).get(group);
		return (view != null) ? granted(group, view) : null;
	}

	/**
	 * Notes the term a group was seen granted in: finding it never granted later, or in a
	 * lower term, means that ZooKeeper lost its data or that it was changed by hand.
	 */
	private GroupView granted(String group, GroupView view) {
		if (view.grant().term() > 0) {
			this.seenTerms.saw(group, view.grant().term());
		}
		return view;
	}

	private List<@Nullable String> candidateIds(String group, List<String> queue, long deadline) throws Exception {
		List<@Nullable String> ids = new ArrayList<>();
		for (String node : queue) {
			CuratorEvent data = this.zookeeper.getData(this.paths.node(group, node), deadline);
			ids.add(CuratorCalls.isOk(data) ? new String(data.getData(), StandardCharsets.UTF_8) : null);
		}
		return ids;
	}

	private <T> T execute(String operation, String group, Duration timeout, Work<T> work) {
		Objects.requireNonNull(group, "group");
		return run(operation + " group '" + group + "'", timeout, work);
	}

	private <T> T run(String action, Duration timeout, Work<T> work) {
		StoreCall call = StoreCall.start(action, "in ZooKeeper under " + this.basePath, timeout);
		try {
			return work.run(call.deadline());
		}
		catch (RuntimeException ex) {
			throw ex;
		}
		catch (InterruptedException ex) {
			throw call.interrupted(ex);
		}
		catch (Exception ex) {
			throw call.failed(ex);
		}
	}

	/** This store's candidates in the group that have not left. */
	private List<QueueMember> groupMembers(String group) {
		Map<String, QueueMember> groupMembers = this.members.get(group);
		return (groupMembers != null) ? groupMembers.values().stream().filter((member) -> !member.left).toList()
				: List.of();
	}

	private @Nullable QueueMember member(Lease lease) {
		Map<String, QueueMember> groupMembers = (lease.holder() != null) ? this.members.get(lease.group()) : null;
		return (groupMembers != null) ? groupMembers.get(lease.holder()) : null;
	}

	@Override
	public String toString() {
		return "ZookeeperLeaseStore[basePath=" + this.basePath + "]";
	}

	@FunctionalInterface
	private interface Work<T> {

		T run(long deadline) throws Exception;

	}

}
