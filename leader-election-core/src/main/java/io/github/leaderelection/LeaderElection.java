package io.github.leaderelection;

import java.util.Optional;

/**
 * This instance's part in the election of one group: whether it leads, who does, and the
 * operations an administrator needs.
 *
 * <p>
 * {@link #isLeader()} is the only thing most code calls. It performs no I/O and takes no
 * lock: it compares a deadline on the monotonic clock, so a process that was paused past
 * its lease answers {@code false} the moment it wakes, even before the election thread
 * has run.
 *
 * <p>
 * IMPORTANT: a lease gives efficiency, not safety. Between a {@code true} answer and the
 * write it guards, this process can pause past its lease. Writes that must never come
 * from two leaders should carry {@link Leadership#term()} and be refused by the store
 * when a higher term has written (a fencing token).
 */
public interface LeaderElection {

	/** The group this election is for. */
	String group();

	/** This instance's candidate id, unique per process. */
	String candidateId();

	/**
	 * Whether this instance leads the group at this instant. Costs no I/O and no lock.
	 */
	boolean isLeader();

	/**
	 * This instance's current leadership, for fencing writes with its term; empty unless
	 * {@link #isLeader()}.
	 */
	Optional<Leadership> leadership();

	/**
	 * The leader as this instance last observed it (from its own grant or its last read
	 * of the store); empty when no leader is known. Costs no I/O.
	 */
	Optional<LeaderInfo> currentLeader();

	/**
	 * Reads who leads from the store now.
	 * @throws LeaderElectionException if the store cannot be read
	 */
	Optional<LeaderInfo> readLeader();

	/**
	 * Gives up leadership if this instance holds it: stops believing at once, releases
	 * the lease and stays out of the race for twice the retry period so another candidate
	 * can take over, or until another candidate has been granted the group.
	 * @return whether this instance was leading
	 */
	boolean yieldLeadership();

	/**
	 * Makes the given candidate the next leader of the group. The current leader (if any)
	 * loses the lease at its next renewal; the target takes over once the current lease
	 * has run out, so the two never lead at once. The target must be a running candidate
	 * of the group.
	 * @throws LeaderElectionException if the store cannot be written
	 */
	void forceLeader(String candidateId);

	/**
	 * Forces a re-election: the current leader loses the lease at its next renewal and
	 * any candidate may win the group once the current lease has run out.
	 * @throws LeaderElectionException if the store cannot be written
	 */
	void forceReelection();

	/**
	 * The records of the group's leader-only runs, if the store keeps them.
	 * @return the run records, or empty when the store cannot keep them
	 */
	default Optional<RunRecords> runRecords() {
		return Optional.empty();
	}

}
