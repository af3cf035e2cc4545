package io.github.leaderelection.zookeeper;

import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;

/**
 * One candidate of a {@link ZookeeperLeaseStore} in one group: its place in the group's
 * queue, its grant while it holds the lease, and the node it watches. The store changes a
 * member's place and grant only while holding the member's lock; the fields are volatile
 * so that reads without the lock (a renewal's quick checks, the connection listener) see
 * the last write.
 */
final class QueueMember {

	final String group;

	final String candidateId;

	/**
	 * Whether it joined: the store then keeps it queued until it leaves. Set once, by
	 * {@code join}.
	 */
	volatile boolean joined;

	/** Whether it left: it takes no place again. Written under its lock. */
	volatile boolean left;

	/** The name of its queue node, or null when not queued. */
	volatile @Nullable String node;

	/** The term of its grant, or 0 when it does not hold the lease. */
	volatile long term;

	volatile long leaseMillis;

	/** The session that owned the node when it was granted. */
	volatile long session;

	/** The store's suspension count before it was granted. */
	volatile long suspensions;

	/**
	 * How long it had to wait out an earlier holder, as recorded in the group node.
	 */
	volatile long quietMillis;

	/** When that wait ends, by this process's monotonic clock. */
	volatile long activeFromNanos;

	/** The node it watches, or null when no watch is set. */
	final AtomicReference<@Nullable String> watched = new AtomicReference<>();

	QueueMember(String group, String candidateId, boolean joined) {
		this.group = group;
		this.candidateId = candidateId;
		this.joined = joined;
	}

	/** Marks a member that {@code tryAcquire} queued as joined from now on. */
	QueueMember join() {
		this.joined = true;
		return this;
	}

	void granted(Grant grant, long session, long suspensions) {
		this.term = grant.term();
		this.leaseMillis = grant.leaseMillis();
		this.session = session;
		this.suspensions = suspensions;
		this.quietMillis = grant.quietMillis();
		// Counted once the grant is committed: by then the earlier holder's wait has
		// begun.
		this.activeFromNanos = System.nanoTime() + grant.quietMillis() * 1_000_000;
	}

	/** Whether the wait for an earlier holder is over. */
	boolean isActive() {
		return this.quietMillis == 0 || System.nanoTime() - this.activeFromNanos >= 0;
	}

	/**
	 * The one order in which batches (renewals and acquisitions alike) take their
	 * members' locks, so that two batches never deadlock.
	 */
	static final Comparator<QueueMember> LOCK_ORDER = Comparator.comparing((QueueMember member) -> member.group)
		.thenComparing((member) -> member.candidateId);

	/**
	 * Runs the work holding the locks of the members, taken in the order given: held
	 * across the requests of a batch, bounded by the call's deadline, so that a member's
	 * place and grant change in one piece. Four locks a stack frame, so that a batch of
	 * 4,000 members takes 1,000 frames.
	 */
	static <T> T locked(List<QueueMember> members, Callable<T> work) throws Exception {
		return locked(members, 0, work);
	}

	private static <T> T locked(List<QueueMember> members, int from, Callable<T> work) throws Exception {
		int left = members.size() - from;
		if (left == 0) {
			return work.call();
		}
		if (left < 4) {
			synchronized (members.get(from)) {
				return locked(members, from + 1, work);
			}
		}
		synchronized (members.get(from)) {
			synchronized (members.get(from + 1)) {
				synchronized (members.get(from + 2)) {
					synchronized (members.get(from + 3)) {
						return locked(members, from + 4, work);
					}
				}
			}
		}
	}

	/** Forgets the watch on the given node, if it is the current one. */
	boolean stopWatching(String node) {
		String current = this.watched.get();
		return node.equals(current) && this.watched.compareAndSet(current, null);
	}

}
