package io.github.leaderelection.spi;

import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The storage a backend provides to the election engine: a record per group holding a
 * holder, a term and a lease that the store expires by its own clock.
 *
 * <p>
 * A store is thread-safe. The election's timing is the engine's: when to renew, retry,
 * step down or take over; a store only keeps each call within the timeout it is given,
 * returning or failing by then, and keeps its own connections alive (reconnecting,
 * subscribing again). What one call does to one group's record is atomic on the server; a
 * batch judges each group on its own, and a call may take several round trips. Failures
 * are thrown as exceptions; the engine survives them.
 *
 * <p>
 * The truth about a lease is always the server's: a store may remember what it read,
 * wrote or heard (the terms it saw, see {@link SeenTerms}; its watches and the
 * connections that carry them; on stores that queue candidates, the candidates' places; a
 * lease of the server's own that carries its records), but never grants, renews or
 * releases on what it remembers alone. A store uses the clients it is given (a
 * {@code DataSource}, a Redis connection factory, a Curator client, an etcd client) and
 * never closes them; {@link #close()} ends only what the store opened itself.
 *
 * <p>
 * The rules every store keeps (checked by the contract tests):
 * <ul>
 * <li>a lease is taken only when it is free, expired or already names the candidate, and
 * every take increments the term, which never decreases (not even after
 * {@link #clear});</li>
 * <li>renew and release act only for the exact holder and term they are given;</li>
 * <li>expiry is judged by the store's clock alone.</li>
 * </ul>
 */
public interface LeaseStore extends AutoCloseable {

	/**
	 * Reads a group's lease.
	 * @return the lease, or empty when the group has never been led
	 */
	Optional<Lease> read(String group, Duration timeout);

	/**
	 * Takes the lease for the candidate if {@link Lease#isAcquirableBy} holds in the
	 * store at that instant, with a term greater than every earlier term of the group,
	 * expiring {@code leaseDuration} from now.
	 * @return the lease taken (its {@link Lease#activeIn()} is positive when an unexpired
	 * lease of another holder was taken over), or empty when another candidate holds a
	 * live lease
	 */
	Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout);

	/**
	 * Takes the leases of several groups for the candidate, each the way
	 * {@link #tryAcquire} takes one: in one request where the store can, so that a node
	 * starting with many groups, or finding many of them free, takes them with one round
	 * trip. Each group is judged on its own; one held by another candidate is left alone
	 * and does not keep the others from being taken. The default takes them one by one
	 * within the one timeout, and returns what it took when the time is up or a call
	 * fails: the engine tries the rest in a later round, and a lease taken is never
	 * thrown away with an exception.
	 * @param groups distinct groups
	 * @return the leases taken, by group; a group missing from it is held by another
	 * candidate, or was not tried
	 * @throws RuntimeException if no lease could be taken because the store failed
	 */
	default Map<String, Lease> tryAcquireAll(Collection<String> groups, String candidateId, Duration leaseDuration,
			Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		Map<String, Lease> taken = new LinkedHashMap<>();
		for (String group : groups) {
			long left = deadline - System.nanoTime();
			if (left <= 0 && !taken.isEmpty()) {
				break;
			}
			try {
				tryAcquire(group, candidateId, leaseDuration, Duration.ofNanos(Math.max(1, left)))
					.ifPresent((lease) -> taken.put(group, lease));
			}
			catch (RuntimeException ex) {
				if (taken.isEmpty()) {
					throw ex;
				}
				break;
			}
		}
		return taken;
	}

	/**
	 * Extends the lease to {@code leaseDuration} from now, only if it still has this
	 * lease's holder and term.
	 * @return whether the lease was extended
	 */
	boolean renew(Lease lease, Duration leaseDuration, Duration timeout);

	/**
	 * Renews several leases, of different groups, the way {@link #renew} renews one: a
	 * store that can does it in one request (a transaction, a script, a multi-operation),
	 * so that a node with many groups renews them all with one round trip. Each lease is
	 * judged on its own; one that is no longer held is left alone and does not keep the
	 * others from being extended. The default renews them one by one, within the one
	 * timeout, and throws when a call fails or the time is up: the leases it renewed
	 * before stay renewed in the store, and the engine renews each of the leases again on
	 * its own.
	 * @param leases leases of distinct groups
	 * @return the groups whose leases were extended
	 */
	default Set<String> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout) {
		StoreCall call = StoreCall.start("renew " + leases.size() + " leases", "in the " + backend() + " store",
				timeout);
		Set<String> renewed = new LinkedHashSet<>();
		for (Lease lease : leases) {
			if (renew(lease, leaseDuration, call.remaining())) {
				renewed.add(lease.group());
			}
		}
		return renewed;
	}

	/**
	 * Reads several groups' leases, the way {@link #read} reads one: in one request where
	 * the store can. The default reads them one by one, within the one timeout, and
	 * throws when a call fails or the time is up: the engine reads again in its next
	 * round.
	 * @return the leases of the groups that have been led, by group
	 */
	default Map<String, Lease> readAll(Collection<String> groups, Duration timeout) {
		StoreCall call = StoreCall.start("read " + groups.size() + " groups", "in the " + backend() + " store",
				timeout);
		Map<String, Lease> leases = new LinkedHashMap<>();
		for (String group : groups) {
			read(group, call.remaining()).ifPresent((lease) -> leases.put(group, lease));
		}
		return leases;
	}

	/**
	 * Keeps a candidate on the store's list of live candidates, which balancing spreads
	 * leadership over: the candidate's entry, with its weight, lasts {@code ttl} from now
	 * by the store's clock. One request, which also answers with every candidate whose
	 * entry has not run out, this one included. Stores that cannot list candidates keep
	 * this default, and an engine that balances refuses to start on them. The weight is 0
	 * while the candidate is starting (its elections have not all joined their groups
	 * yet): it is listed, with no share of the groups.
	 * @return the live candidates and their weights
	 * @throws UnsupportedOperationException if the store cannot list candidates
	 */
	default Map<String, Integer> keepCandidateAlive(String candidateId, int weight, Duration ttl, Duration timeout) {
		throw new UnsupportedOperationException("The " + backend() + " store cannot list live candidates");
	}

	/**
	 * Takes a candidate off the list of live candidates at once (it is shutting down), so
	 * that the others spread its groups without waiting for its entry to run out.
	 */
	default void removeCandidate(String candidateId, Duration timeout) {
	}

	/**
	 * Ends the lease at once, only if it still has this lease's holder and term;
	 * otherwise does nothing. The caller must have stopped acting as leader before
	 * calling this. A holder that was still waiting out an earlier holder
	 * ({@link Lease#activeIn()}) leaves that wait in place for the next one.
	 */
	void release(Lease lease, Duration timeout);

	/**
	 * Names a candidate as holder with a new term, keeping the current lease end, so that
	 * the current holder's renewals fail and the candidate takes over (through
	 * {@link #tryAcquire}, with yet another term) once the current lease is over. Does
	 * nothing if the candidate already holds the lease. The engine only ever renews
	 * leases that {@code tryAcquire} returned, never one it read, so the forced term
	 * itself is never acted on.
	 */
	void forceLeader(String group, String candidateId, Duration timeout);

	/**
	 * Removes the holder, keeping the term and the current lease end, so that the current
	 * holder's renewals fail and any candidate may take over once the current lease is
	 * over.
	 */
	void clear(String group, Duration timeout);

	/**
	 * Asks to be told when a group's lease may have changed, for stores that can push
	 * (watches, pub/sub, notifications); the engine then tries at once instead of at its
	 * next retry. The callback must be cheap and must not block. Stores that cannot push
	 * keep this default.
	 * @return a handle that stops the notifications
	 */
	default AutoCloseable watch(String group, Runnable onChange) {
		return () -> {
		};
	}

	/**
	 * Says that a candidate competes for a group from now on, for stores that queue
	 * candidates (ZooKeeper): the store gives it a place in the group's queue, so that it
	 * is next in line, and told at once, when the holder goes. The store keeps that place
	 * until {@link #leave}, taking it again when it was lost (a new session), so a join
	 * whose I/O fails is not lost: the store records the candidate before it writes.
	 * {@link #read} is not affected: it reports the lease as it is. The engine calls this
	 * on a store thread when it starts competing for a group, and again, after
	 * {@link #leave}, when it has handed the group over to spread leadership, to take its
	 * place at the end of the queue. Stores that do not queue keep this default.
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
	 */
	default void leave(String group, String candidateId, Duration timeout) {
	}

	/**
	 * A short name of the store type for logs, health and metrics, such as {@code jdbc}.
	 */
	String backend();

	/**
	 * Ends what the store opened itself (listening connections, listeners it added to the
	 * client it was given), leaving the application's clients open. Called after the
	 * engines that use the store are closed; a Spring context calls it when it closes the
	 * store's bean. Calling it again does nothing. Stores that open nothing keep this
	 * default.
	 */
	@Override
	default void close() {
	}

}
