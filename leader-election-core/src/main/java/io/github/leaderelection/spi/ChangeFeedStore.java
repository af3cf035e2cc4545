package io.github.leaderelection.spi;

import java.time.Duration;

/**
 * A store that can tell the engine at once when a group's lease may have changed
 * (watches, pub/sub, notifications), so that a follower tries at once instead of at its
 * next look; and, on a store that queues candidates (ZooKeeper), that gives each its
 * place in the group's line. Without it, followers find changes by looking once per retry
 * period.
 */
public interface ChangeFeedStore extends LeaseStore {

	/**
	 * Asks to be told when a group's lease may have changed. The callback must be cheap
	 * and must not block.
	 * @param group the group
	 * @param onChange what to run on a change
	 * @return a handle that stops the notifications
	 */
	AutoCloseable watch(String group, Runnable onChange);

	/**
	 * Says that a candidate competes for a group from now on, for stores that queue
	 * candidates: the store gives it a place in the group's queue, so that it is next in
	 * line, and told at once, when the holder goes. The store keeps that place until
	 * {@link #leave}, taking it again when it was lost (a new session), so a join whose
	 * I/O fails is not lost: the store records the candidate before it writes.
	 * {@link #read} is not affected: it reports the lease as it is. The engine calls this
	 * on a store thread when it starts competing for a group, and again, after
	 * {@link #leave}, when it has handed the group over to spread leadership, to take its
	 * place at the end of the queue. Stores that do not queue keep this default.
	 * @param group the group
	 * @param candidateId the candidate
	 * @param timeout how long the call may take
	 */
	default void join(String group, String candidateId, Duration timeout) {
	}

	/**
	 * Says that a candidate no longer competes for a group: the store gives up its place
	 * in the queue and takes none again until the candidate joins again, not even for a
	 * {@link #tryAcquire} that was already under way. A lease the candidate holds is not
	 * ended by this; {@link #release} ends it. The engine calls this when it stops, after
	 * its release, if any, and before it joins again after a hand-over. Stores that do
	 * not queue keep this default.
	 * @param group the group
	 * @param candidateId the candidate
	 * @param timeout how long the call may take
	 */
	default void leave(String group, String candidateId, Duration timeout) {
	}

}
