package io.github.leaderelection.zookeeper;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

import io.github.leaderelection.spi.BatchCutShortException;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.SeenTerms;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * Takes the leases of many groups for a store's candidates with a few requests, where one
 * by one would take four round trips per group: one read of every group (its data, its
 * queue, and the candidate's queue node, whose stat names the session that owns it), the
 * missing group nodes and then the missing queue nodes created with one multi-operation
 * each, and one multi-operation with the grants of every group found free, each as large
 * as half a packet ({@code jute.maxbuffer}) allows.
 *
 * <p>
 * Each grant is the one {@link ZookeeperLeaseStore#tryAcquire} makes: only on a group
 * without a live holder other than this candidate's node, only on a node whose ephemeral
 * owner is the current session (CURATOR-696), checking the candidate's node and the group
 * node's version, with the next term and the wait for an earlier holder of {@link #plan}.
 *
 * <p>
 * A multi-operation is all or nothing, and its answer names only the first operation that
 * failed. That group changed since it was read (another candidate took it, or its node
 * went): it is not taken. The groups after it are read again, in one request, and judged
 * anew; those before it passed and are sent again. So candidates racing for the same
 * groups cost each other two requests per collision, not one per group.
 *
 * <p>
 * A batch holds the locks of its members from its reads until its answer, as a single
 * acquisition holds its member's: a member's place and grant change in one piece
 * ({@link QueueMember}).
 */
final class Acquisitions {

	/**
	 * The most groups in one request: a batch takes its members' locks by recursion, four
	 * a stack frame (see {@link QueueMember#locked}).
	 */
	private static final int MAX_BATCH = 1000;

	private final CuratorCalls zookeeper;

	private final GroupPaths paths;

	private final GroupReads reads;

	private final SeenTerms seenTerms;

	private final SessionMarks marks;

	/** How many times the connection was SUSPENDED or LOST so far. */
	private final LongSupplier suspensions;

	/** Watches the node ahead of the member's, or its own if it holds the lease. */
	private final BiConsumer<QueueMember, GroupView> armWatch;

	/** Tells the group's watchers that its lease may have changed. */
	private final Consumer<String> notifyGroup;

	/**
	 * The prefix of the nodes of a multi-operation of creates whose answer was lost with
	 * the connection, by group.
	 */
	private final Map<String, String> orphans = new ConcurrentHashMap<>();

	Acquisitions(CuratorCalls zookeeper, GroupPaths paths, GroupReads reads, SeenTerms seenTerms, SessionMarks marks,
			LongSupplier suspensions, BiConsumer<QueueMember, GroupView> armWatch, Consumer<String> notifyGroup) {
		this.zookeeper = zookeeper;
		this.paths = paths;
		this.reads = reads;
		this.seenTerms = seenTerms;
		this.marks = marks;
		this.suspensions = suspensions;
		this.armWatch = armWatch;
		this.notifyGroup = notifyGroup;
	}

	/**
	 * The grant a member makes on a group it may take: the next term, and how long it
	 * waits before it acts.
	 * @param session the session that owns the member's node
	 * @param holderMayBelieve whether the previous holder's node went while its session
	 * lives on (see {@link SessionMarks})
	 * @param lost whether the group's record shows that ZooKeeper lost what this store
	 * saw (see {@link SeenTerms})
	 */
	static Plan plan(QueueMember member, String node, long session, GroupView view, boolean holderMayBelieve,
			Duration leaseDuration, SeenTerms seenTerms) {
		Grant last = view.grant();
		Long storedTerm = (last.term() == 0) ? null : last.term();
		boolean lost = seenTerms.isLost(member.group, storedTerm, last.holder());
		// After a forced change the previous holder may believe for its lease duration
		// still. So may the holder of a group whose grants ZooKeeper lost, and one whose
		// node was deleted by hand (SessionMarks).
		long quietMillis = lost
				? seenTerms.lostWait(member.group, Duration.ofMillis(last.quietMillis()), leaseDuration).toMillis()
				: last.quietMillis();
		if (holderMayBelieve) {
			quietMillis = Math.max(quietMillis, last.leaseMillis());
		}
		// ZooKeeper tells no time but a node's: the floor of a grant, lost record or
		// not, is the group node's last write by ZooKeeper's clock (see GroupView).
		long term = lost ? Math.max(view.nextTerm(), seenTerms.nextTerm(member.group, storedTerm, view.serverMicros()))
				: view.nextTerm();
		// The wait stays in the group node until this holder's renewals see it over, so
		// that a release before then passes it on to the next holder.
		return new Plan(new Grant(term, member.candidateId, node, session, leaseDuration.toMillis(), quietMillis),
				lost);
	}

	/**
	 * Takes the members' leases, in batches of half a packet at most.
	 * @param members distinct members, one per group
	 * @return the leases taken, by group
	 * @throws BatchCutShortException if a batch failed after others were answered
	 */
	Map<String, Lease> acquire(List<QueueMember> members, Duration leaseDuration, long deadline) throws Exception {
		Map<String, Lease> taken = new LinkedHashMap<>();
		Set<String> answered = new LinkedHashSet<>();
		List<QueueMember> batch = new ArrayList<>();
		int bytes = 0;
		int budget = members.isEmpty() ? 0 : this.zookeeper.batchBytes();
		List<QueueMember> ordered = members.stream().sorted(QueueMember.LOCK_ORDER).toList();
		for (int i = 0; i <= ordered.size(); i++) {
			QueueMember member = (i < ordered.size()) ? ordered.get(i) : null;
			int size = (member != null) ? bytes(member) : 0;
			if (!batch.isEmpty() && (member == null || batch.size() == MAX_BATCH || bytes + size > budget)) {
				try {
					taken.putAll(acquireLocked(batch, leaseDuration, deadline));
				}
				catch (Exception ex) {
					if (answered.isEmpty()) {
						throw ex;
					}
					throw new BatchCutShortException(answered, taken, ex);
				}
				batch.forEach((done) -> answered.add(done.group));
				batch = new ArrayList<>();
				bytes = 0;
			}
			if (member != null) {
				batch.add(member);
				bytes += size;
			}
		}
		return taken;
	}

	/**
	 * More than the bytes a member's grant adds to a request (a check of its node and a
	 * write of the grant, about 120 plus twice the group path, the node's name and twice
	 * the candidate id), and to the answer of a read that judges it again: a batch sized
	 * by it fits in a packet both ways.
	 */
	private int bytes(QueueMember member) {
		return 256 + 2 * this.paths.group(member.group).length() + 3 * member.candidateId.length();
	}

	private Map<String, Lease> acquireLocked(List<QueueMember> batch, Duration leaseDuration, long deadline)
			throws Exception {
		return QueueMember.locked(batch, () -> {
			// A member that left while this call was under way takes no place.
			List<QueueMember> competing = batch.stream().filter((member) -> !member.left).toList();
			long suspensionsBefore = this.suspensions.getAsLong();
			long session = this.marks.mark(deadline);
			Map<QueueMember, GroupReads.Read> read = read(competing, deadline);
			createMissingGroups(competing, read, deadline);
			Set<QueueMember> queuedNow = enqueueMissing(competing, read, deadline);
			if (!queuedNow.isEmpty()) {
				read.putAll(read(List.copyOf(queuedNow), deadline));
			}
			List<Attempt> attempts = judge(competing, read, queuedNow, leaseDuration, session, deadline);
			Map<String, Lease> taken = new LinkedHashMap<>();
			for (Attempt committed : commit(attempts, queuedNow, leaseDuration, session, deadline)) {
				taken.put(committed.member().group, granted(committed, session, suspensionsBefore, leaseDuration));
			}
			return taken;
		});
	}

	private Map<QueueMember, GroupReads.Read> read(List<QueueMember> members, long deadline) throws Exception {
		Map<String, @Nullable String> nodes = new LinkedHashMap<>();
		for (QueueMember member : members) {
			nodes.put(member.group, member.node);
		}
		Map<String, GroupReads.Read> byGroup = this.reads.readWithNodes(nodes, deadline);
		Map<QueueMember, GroupReads.Read> read = new LinkedHashMap<>();
		for (QueueMember member : members) {
			GroupReads.Read groupRead = Objects.requireNonNull(byGroup.get(member.group));
			GroupView view = groupRead.view();
			if (view != null && view.grant().term() > 0) {
				this.seenTerms.saw(member.group, view.grant().term());
			}
			deleteOrphans(member.group, view);
			read.put(member, groupRead);
		}
		return read;
	}

	/**
	 * Creates the group nodes that do not exist yet with one multi-operation (and the
	 * base path first if it is missing), and reads them again. One that another store
	 * created first fails it: it is read again all the same, and the groups still missing
	 * are created with their queue nodes, one request each.
	 */
	private void createMissingGroups(List<QueueMember> members, Map<QueueMember, GroupReads.Read> read, long deadline)
			throws Exception {
		List<QueueMember> missing = members.stream().filter((member) -> read.get(member).view() == null).toList();
		if (missing.isEmpty()) {
			return;
		}
		List<CuratorOp> creates = new ArrayList<>();
		for (QueueMember member : missing) {
			// Empty, as a parent Curator creates: no grant yet.
			creates.add(this.zookeeper.create(this.paths.group(member.group), new byte[0], CreateMode.PERSISTENT));
		}
		if (this.zookeeper.createAll(deadline, creates, false).getResultCode() == Code.NONODE.intValue()) {
			this.zookeeper.createNode(this.paths.base(), new byte[0], CreateMode.PERSISTENT, deadline);
			this.zookeeper.createAll(deadline, creates, false);
		}
		read.putAll(read(missing, deadline));
	}

	/**
	 * Queues the members that have no place in their group's queue: in existing groups,
	 * with one multi-operation of creates; in groups not created yet, or when that
	 * multi-operation failed on a group deleted since, with creates of their own (which
	 * create the group too), all sent before the first answer is awaited. A node of the
	 * multi-operation is named as Curator's protection names one, with a random prefix:
	 * if the answer is lost with the connection, the next batch reading the group deletes
	 * a node with that prefix, which nobody answers for.
	 * @return the members queued
	 */
	private Set<QueueMember> enqueueMissing(List<QueueMember> members, Map<QueueMember, GroupReads.Read> read,
			long deadline) throws Exception {
		List<QueueMember> inMulti = new ArrayList<>();
		List<QueueMember> alone = new ArrayList<>();
		for (QueueMember member : members) {
			GroupView view = read.get(member).view();
			if (view == null || !view.isQueued(member.node)) {
				member.node = null;
				member.term = 0;
				member.watched.set(null);
				((view != null) ? inMulti : alone).add(member);
			}
		}
		Set<QueueMember> queued = new HashSet<>();
		if (!inMulti.isEmpty()) {
			queued.addAll(enqueueTogether(inMulti, deadline));
			inMulti.removeAll(queued);
			alone.addAll(inMulti);
		}
		Map<QueueMember, CompletableFuture<CuratorEvent>> creates = new LinkedHashMap<>();
		for (QueueMember member : alone) {
			creates.put(member, this.zookeeper.createEphemeralSequential(this.paths.group(member.group) + "/lease-",
					member.candidateId.getBytes(StandardCharsets.UTF_8)));
		}
		Exception failure = null;
		for (Map.Entry<QueueMember, CompletableFuture<CuratorEvent>> create : creates.entrySet()) {
			try {
				create.getKey().node = ZKPaths.getNodeFromPath(this.zookeeper.created(create.getValue(), deadline));
				queued.add(create.getKey());
			}
			catch (Exception ex) {
				// Awaited all the same: a member whose node was made must know its name.
				failure = (failure != null) ? failure : ex;
			}
		}
		if (failure != null) {
			throw failure;
		}
		return queued;
	}

	/**
	 * Queues the members with one multi-operation of creates.
	 * @return the members queued: all, or none when a group was deleted since it was read
	 */
	private List<QueueMember> enqueueTogether(List<QueueMember> members, long deadline) throws Exception {
		List<CuratorOp> creates = new ArrayList<>();
		Map<String, String> prefixes = new HashMap<>();
		for (QueueMember member : members) {
			String prefix = "_c_" + UUID.randomUUID() + "-";
			prefixes.put(member.group, prefix);
			creates.add(this.zookeeper.create(this.paths.group(member.group) + "/" + prefix + "lease-",
					member.candidateId.getBytes(StandardCharsets.UTF_8), CreateMode.EPHEMERAL_SEQUENTIAL));
		}
		CuratorEvent result;
		try {
			result = this.zookeeper.createAll(deadline, creates, true);
		}
		catch (KeeperException.ConnectionLossException ex) {
			this.orphans.putAll(prefixes);
			throw ex;
		}
		if (!CuratorCalls.isOk(result)) {
			return List.of();
		}
		List<CuratorTransactionResult> results = result.getOpResults();
		for (int i = 0; i < members.size(); i++) {
			members.get(i).node = ZKPaths.getNodeFromPath(results.get(i).getResultPath());
		}
		return members;
	}

	/**
	 * Deletes the nodes of a multi-operation of creates whose answer was lost with the
	 * connection, found in the group's queue as read.
	 */
	private void deleteOrphans(String group, @Nullable GroupView view) {
		String prefix = this.orphans.get(group);
		if (prefix == null || view == null) {
			return;
		}
		this.orphans.remove(group, prefix);
		for (String node : view.queue()) {
			if (node.startsWith(prefix)) {
				this.zookeeper.deleteInBackground(this.paths.node(group, node));
			}
		}
	}

	/**
	 * The grants to try: of each member that may take its group's lease as read. The
	 * others are not taken, and watch the node ahead of theirs.
	 */
	private List<Attempt> judge(List<QueueMember> members, Map<QueueMember, GroupReads.Read> read,
			Set<QueueMember> queuedNow, Duration leaseDuration, long session, long deadline) throws Exception {
		List<Attempt> attempts = new ArrayList<>();
		Map<Long, Boolean> marked = new HashMap<>();
		for (QueueMember member : members) {
			GroupReads.Read groupRead = read.get(member);
			GroupView view = groupRead.view();
			String node = member.node;
			if (view == null || node == null || !node.equals(groupRead.node()) || !view.isQueued(node)) {
				member.term = 0;
				continue;
			}
			Grant last = view.grant();
			boolean mine = member.candidateId.equals(last.holder()) && node.equals(last.node());
			if (view.hasLiveHolder() && !mine) {
				notTaken(member, view, queuedNow);
				continue;
			}
			// CURATOR-696: after a new session, never grant on a node that this session
			// does not own.
			Stat stat = groupRead.nodeStat();
			if (stat == null || stat.getEphemeralOwner() != session) {
				member.node = null;
				member.term = 0;
				continue;
			}
			boolean holderMayBelieve = this.marks.holderMayBelieve(view, member.candidateId, session, marked, deadline);
			attempts.add(new Attempt(member, view,
					plan(member, node, session, view, holderMayBelieve, leaseDuration, this.seenTerms)));
		}
		return attempts;
	}

	private void notTaken(QueueMember member, GroupView view, Set<QueueMember> queuedNow) {
		member.term = 0;
		this.armWatch.accept(member, view);
		if (queuedNow.contains(member)) {
			// Queued now: let the elector read the truth at once.
			this.notifyGroup.accept(member.group);
		}
	}

	/**
	 * Sends the grants in one multi-operation and, after a check failed, again without
	 * that group and with the groups after it judged anew, until one is committed or none
	 * is left.
	 * @return the grants committed, each with the group node's version it left
	 */
	private List<Attempt> commit(List<Attempt> attempts, Set<QueueMember> queuedNow, Duration leaseDuration,
			long session, long deadline) throws Exception {
		List<Attempt> pending = attempts;
		while (!pending.isEmpty()) {
			List<CuratorOp> operations = new ArrayList<>();
			for (Attempt attempt : pending) {
				QueueMember member = attempt.member();
				operations.add(this.zookeeper.check(this.paths.node(member.group, attempt.plan().grant().node())));
				operations.add(this.zookeeper.setData(this.paths.group(member.group), attempt.view().version(),
						attempt.plan().grant().bytes()));
			}
			CuratorEvent result = this.zookeeper.transaction(deadline, operations.toArray(CuratorOp[]::new));
			List<CuratorTransactionResult> results = result.getOpResults();
			if (results == null) {
				throw KeeperException.create(Code.get(result.getResultCode()));
			}
			if (CuratorCalls.isOk(result)) {
				List<Attempt> committed = new ArrayList<>();
				for (int i = 0; i < pending.size(); i++) {
					committed.add(pending.get(i).withVersion(results.get(2 * i + 1).getResultStat().getVersion()));
				}
				return committed;
			}
			int failed = 0;
			while (failed < results.size() && results.get(failed).getError() == Code.OK.intValue()) {
				failed++;
			}
			if (failed == results.size()) {
				throw KeeperException.create(Code.get(result.getResultCode()));
			}
			failed /= 2;
			pending.get(failed).member().term = 0;
			List<Attempt> next = new ArrayList<>(pending.subList(0, failed));
			List<QueueMember> unjudged = pending.subList(failed + 1, pending.size())
				.stream()
				.map(Attempt::member)
				.toList();
			if (!unjudged.isEmpty()) {
				next.addAll(judge(unjudged, read(unjudged, deadline), queuedNow, leaseDuration, session, deadline));
			}
			pending = next;
		}
		return List.of();
	}

	private Lease granted(Attempt attempt, long session, long suspensionsBefore, Duration leaseDuration) {
		QueueMember member = attempt.member();
		Grant grant = attempt.plan().grant();
		if (attempt.plan().lost()) {
			this.seenTerms.warnLost(member.group, grant.term());
		}
		member.granted(grant, session, suspensionsBefore);
		this.seenTerms.saw(member.group, grant.term());
		this.armWatch.accept(member, attempt.view());
		// The group node's version: renewals and the release check it.
		return new Lease(member.group, member.candidateId, grant.term(), leaseDuration,
				Duration.ofMillis(grant.quietMillis()), attempt.version());
	}

	/**
	 * A grant a member makes.
	 *
	 * @param grant what the group node will hold
	 * @param lost whether the record showed that ZooKeeper lost what this store saw
	 */
	record Plan(Grant grant, boolean lost) {

	}

	/**
	 * A grant to try on a group as read, and once committed, the group node's version it
	 * left.
	 */
	private record Attempt(QueueMember member, GroupView view, Plan plan, int version) {

		Attempt(QueueMember member, GroupView view, Plan plan) {
			this(member, view, plan, -1);
		}

		Attempt withVersion(int newVersion) {
			return new Attempt(this.member, this.view, this.plan, newVersion);
		}

	}

}
