package io.github.leaderelection.etcd;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The etcd leases that carry the groups a candidate leads through this store: one per
 * candidate, shared by all its groups, so that one keep-alive renews them all, and a
 * grant needs no etcd lease of its own (a write to etcd's log less on every handover).
 *
 * <p>
 * Sharing changes what ends a group's lease key. With a lease per group, a holder that
 * stopped renewing a group let that lease run out. With a shared lease, the keep-alives
 * for the other groups keep every key on it alive. So the store remembers each lease key
 * it attached: its group, lease and revision, and when its holder's belief was last
 * extended. During a renewal of that lease it ends every key whose holder has not renewed
 * it for the lease's whole TTL and a call timeout (a release that failed, a group forced
 * or cleared away): it releases the group if the record is still as the grant left it,
 * and deletes the key otherwise. The holder's belief lasts less than a lease duration
 * from the start of its last renewal, and a renewal sent within it is over a timeout
 * later, so it is over by then, on this machine's own clock. But a holder whose renewals
 * failed for a while (etcd was down, the process paused) renews its groups again, in
 * several calls at once, and one that succeeds restores its belief: so a key is never
 * ended while a renewal of its group is under way, and a renewal that began while a key
 * of its group was being ended does not count for that group (its read may have come
 * before the end).
 *
 * <p>
 * A follower's first grant should not wait for a lease to be granted: the reads keep a
 * spare lease alive, of the TTL that the leases they find were granted for, and keep
 * alive a candidate's lease that carries nothing (after it handed its groups over).
 * Neither carries a key, so keeping them alive holds no group.
 */
final class NodeLeases {

	private static final Logger logger = LoggerFactory.getLogger(NodeLeases.class);

	private final EtcdLeases leases;

	/** The lease each candidate takes groups on now. */
	private final Map<String, NodeLease> current = new ConcurrentHashMap<>();

	/** Granted ahead of time, for the first candidate that takes a group. */
	private final AtomicReference<@Nullable NodeLease> spare = new AtomicReference<>();

	/** Whether a spare is being granted or an idle lease refreshed from a read. */
	private final AtomicBoolean warming = new AtomicBoolean();

	/** The lease key of each group this store attached to a lease, by group. */
	private final Map<String, Attachment> attached = new ConcurrentHashMap<>();

	/** How many renewals of each group are under way. Guarded by this. */
	private final Map<String, Integer> renewing = new HashMap<>();

	/** The groups whose lease key is being ended as an orphan. Guarded by this. */
	private final Set<String> ending = new HashSet<>();

	NodeLeases(EtcdLeases leases) {
		this.leases = leases;
	}

	/**
	 * The lease that a grant for the candidate can go on without granting one first: its
	 * own, or else the spare, if it may still be alive and has the TTL asked for. Whether
	 * it is alive is only a guess here; the grant refreshes it in the same breath, and
	 * etcd refuses a key on a lease that is gone.
	 */
	@Nullable NodeLease forGrant(String candidateId, long ttlSeconds) {
		long now = System.nanoTime();
		NodeLease own = this.current.get(candidateId);
		if (own != null && own.ttlSeconds() == ttlSeconds && own.mayBeAlive(now)) {
			return own;
		}
		NodeLease warm = this.spare.get();
		if (warm != null && warm.ttlSeconds() == ttlSeconds && warm.mayBeAlive(now)
				&& this.spare.compareAndSet(warm, null)) {
			this.current.put(candidateId, warm);
			return warm;
		}
		return null;
	}

	/** A new lease for the candidate, which its later grants go on. */
	CompletableFuture<NodeLease> grant(String candidateId, long ttlSeconds) {
		long sent = System.nanoTime();
		return this.leases.grant(ttlSeconds).thenApply((id) -> {
			NodeLease lease = new NodeLease(id, ttlSeconds, sent);
			this.current.put(candidateId, lease);
			return lease;
		});
	}

	/**
	 * Refreshes a lease once.
	 * @return its TTL, or -1 when it is gone
	 */
	CompletableFuture<Long> keepAlive(long leaseId) {
		long sent = System.nanoTime();
		return this.leases.keepAlive(leaseId).thenApply((ttl) -> {
			for (NodeLease lease : known()) {
				if (lease.id() == leaseId) {
					if (ttl > 0) {
						lease.refreshed(sent);
					}
					else {
						forget(lease);
					}
				}
			}
			return ttl;
		});
	}

	/** A lease that etcd no longer has: nothing goes on it again. */
	void forget(NodeLease lease) {
		this.current.values().remove(lease);
		this.spare.compareAndSet(lease, null);
	}

	// The keys on the leases

	/** The group's lease key was written on the lease, at the given revision. */
	void attach(String group, long leaseId, long keyRevision, long beliefStartNanos) {
		this.attached.put(group, new Attachment(group, leaseId, keyRevision, beliefStartNanos));
	}

	/** The group's holder renewed its lease, in a renewal that started then. */
	void renewed(String group, long leaseId, long beliefStartNanos) {
		this.attached.computeIfPresent(group, (key, attachment) -> (attachment.leaseId() == leaseId)
				? new Attachment(group, leaseId, attachment.keyRevision(), beliefStartNanos) : attachment);
	}

	/** The group's lease key is no longer on the lease: released, or taken by another. */
	void detach(String group, long leaseId) {
		this.attached.computeIfPresent(group,
				(key, attachment) -> (attachment.leaseId() == leaseId) ? null : attachment);
	}

	/**
	 * A renewal found the group's record no longer held by the renewed lease: the key
	 * stays tracked while the record still has it on the same etcd lease (a force or a
	 * clear keeps it there until it is deleted as an orphan), and is forgotten otherwise.
	 * @param recordLeaseId the etcd lease the record names now, 0 for none
	 */
	void detachUnlessOn(String group, long recordLeaseId) {
		this.attached.computeIfPresent(group,
				(key, attachment) -> (attachment.leaseId() == recordLeaseId) ? attachment : null);
	}

	/**
	 * A renewal of the groups begins: until it {@linkplain #renewalOver ends}, or finds
	 * that it {@linkplain #cannotRenew cannot renew} one, none of their keys is an
	 * orphan.
	 * @return the renewal, which tells whether it {@linkplain Renewal#counts counts} for
	 * each group
	 */
	synchronized Renewal renewalBegins(Collection<String> groups) {
		Set<String> distinct = new HashSet<>(groups);
		Set<String> endingNow = new HashSet<>();
		for (String group : distinct) {
			this.renewing.merge(group, 1, Integer::sum);
			if (this.ending.contains(group)) {
				endingNow.add(group);
			}
		}
		return new Renewal(distinct, endingNow);
	}

	/**
	 * The renewal cannot succeed for the group: it read a record that its lease no longer
	 * holds, or the group's key was being ended when it began. The key may be an orphan
	 * from now on.
	 */
	synchronized void cannotRenew(Renewal renewal, String group) {
		if (renewal.groups().remove(group)) {
			stopRenewing(group);
		}
	}

	synchronized void renewalOver(Renewal renewal) {
		renewal.groups().forEach(this::stopRenewing);
		renewal.groups().clear();
	}

	private void stopRenewing(String group) {
		this.renewing.computeIfPresent(group, (key, count) -> (count > 1) ? count - 1 : null);
	}

	/**
	 * The keys on the lease that no belief has covered for its whole TTL and a renewal's
	 * timeout more, and that no renewal under way renews: each is being ended from now
	 * on, until {@link #orphanEnded}. The holder's engine may have sent a renewal of
	 * another group just before its belief ended (a call of this store's own, on another
	 * thread): one that read the record before the group is released would still extend
	 * that belief, so the group is released only once any such renewal is over, answered
	 * or timed out.
	 * @param timeout the timeout of the holder's renewals (its engine gives all its calls
	 * one)
	 */
	synchronized List<Attachment> orphans(long leaseId, long ttlSeconds, Duration timeout) {
		long now = System.nanoTime();
		List<Attachment> orphans = new ArrayList<>();
		for (Attachment attachment : this.attached.values()) {
			if (attachment.leaseId() == leaseId && !this.renewing.containsKey(attachment.group())
					&& !this.ending.contains(attachment.group())
					&& now - attachment.beliefStartNanos() > TimeUnit.SECONDS.toNanos(ttlSeconds) + timeout.toNanos()) {
				orphans.add(attachment);
				this.ending.add(attachment.group());
			}
		}
		return orphans;
	}

	/** The end of an orphan's key is over, done or not. */
	synchronized void orphanEnded(Attachment orphan) {
		this.ending.remove(orphan.group());
	}

	/**
	 * A renewal under way.
	 *
	 * @param groups the groups it may still renew; guarded by the {@link NodeLeases}
	 * @param endingAtStart its groups whose key was being ended when it began: it does
	 * not count for them
	 */
	record Renewal(Set<String> groups, Set<String> endingAtStart) {

		/** Whether a success of this renewal extends the belief in the group. */
		boolean counts(String group) {
			return !this.endingAtStart.contains(group);
		}

	}

	// Warm leases for followers

	/**
	 * Called by reads, which saw leases of the given TTL: grants a spare of that TTL if
	 * no lease of that TTL may be alive, and refreshes the spare and every candidate
	 * lease that carries no key when less than two call timeouts (the engine reads once
	 * per retry period, its call timeout) are left of them, or half their TTL. Sent
	 * without waiting, one at a time; a failure only means that a later grant grants a
	 * lease first.
	 */
	void keepWarm(long ttlSeconds, Duration timeout) {
		long now = System.nanoTime();
		List<NodeLease> idle = new ArrayList<>();
		for (NodeLease lease : known()) {
			if (lease.dueForRefresh(now, timeout) && lease.mayBeAlive(now) && !carriesKeys(lease)) {
				idle.add(lease);
			}
		}
		// A spare only for a store whose candidates have no lease of that TTL yet (as a
		// rule, an instance has one candidate).
		NodeLease warm = this.spare.get();
		boolean needsSpare = (warm == null || warm.ttlSeconds() != ttlSeconds || !warm.mayBeAlive(now))
				&& this.current.values()
					.stream()
					.noneMatch((lease) -> lease.ttlSeconds() == ttlSeconds && lease.mayBeAlive(now));
		if ((idle.isEmpty() && !needsSpare) || !this.warming.compareAndSet(false, true)) {
			return;
		}
		List<CompletableFuture<?>> requests = new ArrayList<>();
		for (NodeLease lease : idle) {
			requests.add(keepAlive(lease.id()));
		}
		if (needsSpare) {
			long sent = System.nanoTime();
			// Refreshed once at once: the first keep-alive of a lease costs jetcd more
			// than the next ones, and a grant sends one.
			requests.add(this.leases.grant(ttlSeconds).thenCompose((id) -> {
				NodeLease previous = this.spare.getAndSet(new NodeLease(id, ttlSeconds, sent));
				if (previous != null) {
					this.leases.revokeQuietly(previous.id());
				}
				return keepAlive(id);
			}));
		}
		CompletableFuture.allOf(requests.toArray(CompletableFuture[]::new)).whenComplete((result, ex) -> {
			this.warming.set(false);
			if (ex != null) {
				logger.debug("Could not keep a spare etcd lease alive; the next grant grants one first", ex);
			}
		});
	}

	private boolean carriesKeys(NodeLease lease) {
		return this.attached.values().stream().anyMatch((attachment) -> attachment.leaseId() == lease.id());
	}

	private List<NodeLease> known() {
		List<NodeLease> known = new ArrayList<>(this.current.values());
		NodeLease warm = this.spare.get();
		if (warm != null) {
			known.add(warm);
		}
		return known;
	}

	/**
	 * An etcd lease granted for a candidate's groups (or a spare, for whichever takes a
	 * group first).
	 */
	static final class NodeLease {

		private final long id;

		private final long ttlSeconds;

		/**
		 * When the last grant or keep-alive that found it alive was sent: etcd keeps it
		 * at least a TTL from then.
		 */
		private volatile long refreshedNanos;

		NodeLease(long id, long ttlSeconds, long refreshedNanos) {
			this.id = id;
			this.ttlSeconds = ttlSeconds;
			this.refreshedNanos = refreshedNanos;
		}

		long id() {
			return this.id;
		}

		long ttlSeconds() {
			return this.ttlSeconds;
		}

		void refreshed(long sentNanos) {
			this.refreshedNanos = Math.max(this.refreshedNanos, sentNanos);
		}

		boolean mayBeAlive(long now) {
			return now - this.refreshedNanos < TimeUnit.SECONDS.toNanos(this.ttlSeconds);
		}

		boolean dueForRefresh(long now, Duration timeout) {
			long ttl = TimeUnit.SECONDS.toNanos(this.ttlSeconds);
			return now - this.refreshedNanos > Math.max(ttl / 2, ttl - 2 * timeout.toNanos());
		}

	}

	/**
	 * A group's lease key on a lease.
	 *
	 * @param keyRevision the revision at which the key was written, which a deletion
	 * compares on
	 * @param beliefStartNanos when the last grant or renewal that extended its holder's
	 * belief started
	 */
	record Attachment(String group, long leaseId, long keyRevision, long beliefStartNanos) {
	}

}
