package io.github.leaderelection.chaos;

import java.util.Arrays;

/**
 * The faults the harness injects, each with the scenario of the safety research it stands
 * for.
 */
enum FaultType {

	/** {@code kill -9} of the leader, then a new incarnation of it (F10). */
	KILL_LEADER("kill-leader"),

	/** {@code kill -9} of a follower, then a new incarnation of it. */
	KILL_FOLLOWER("kill-follower"),

	/**
	 * {@code SIGTERM} of the leader: it stops leading, releases and exits; then a new
	 * incarnation (F11).
	 */
	RESTART_LEADER("restart-leader"),

	/**
	 * {@code kill -STOP} of the leader for longer than the lease, then {@code -CONT} (F1,
	 * F13).
	 */
	STOP_LEADER("stop-leader"),

	/** {@code kill -STOP} of the leader for less than the renew deadline (F2). */
	PAUSE_LEADER("pause-leader"),

	/**
	 * The leader's proxy black-holes (accepts, then stalls) for longer than the renew
	 * deadline (F3, F4, F5).
	 */
	CUT_LEADER("cut-leader"),

	/**
	 * A follower's proxy black-holes as long; it must not take over, nor act when it
	 * heals (F26).
	 */
	CUT_FOLLOWER("cut-follower"),

	/** The leader's proxy adds 100-400 ms each way for a few seconds (F4, F5). */
	SLOW_LEADER("slow-leader"),

	/**
	 * Every node's link gets slow, with a round trip near the store call's timeout (each
	 * way 35-50 % of the retry period), for a few seconds: a store that is slow for
	 * everyone.
	 */
	SLOW_STORE("slow-store"),

	/**
	 * A connection-flapping storm: every node's connections to the store are closed every
	 * 150-600 ms for a few seconds, and the nodes connect again each time (F24).
	 */
	FLAP_CONNECTIONS("flap-connections"),

	/**
	 * The leader's links to its store and to the fenced database fail one way (requests
	 * arrive, answers do not) for longer than the lease: a fenced write it sent holds the
	 * fence row's lock until the database ends the transaction, and the next leader's
	 * writes must not wait longer than that (F5; issue 17).
	 */
	HANG_LEADER("hang-leader"),

	/**
	 * The leader's job starts ignoring revocation (it acts on its last leadership without
	 * checking it), then the leader's store link is cut for longer than the renew
	 * deadline, and the job goes on for a lease after the link heals: the fence must
	 * refuse its writes once the next leader has written (issue 17).
	 */
	ROGUE_LEADER("rogue-leader"),

	/**
	 * The leader's election clock (the monotonic clock its deadlines are measured on)
	 * runs at another rate than real time, drawn from the run's {@code clockRates}
	 * (within the margin: 0 overlaps expected; the clock control goes beyond it), while
	 * its store link is cut for longer than its belief can last (issue 17).
	 */
	SKEW_LEADER("skew-leader"),

	/**
	 * The store server crashes or stops, and starts again after 0 to 1.5 renew deadlines
	 * (F27, F23, Redis data loss).
	 */
	RESTART_STORE("restart-store"),

	/**
	 * The store's master is killed ({@code kill -9}) and its replica promoted (Redis
	 * Sentinel); the old master comes back empty as the new master's replica. A
	 * replicated store's failover (issue 17).
	 */
	FAILOVER_STORE("failover-store"),

	/**
	 * The election's own data in the store is lost or changed by hand while the nodes
	 * run: one group's record deleted, all of it wiped, an earlier copy restored over it,
	 * or one group's term lowered (see {@link LostStoreData}). Invariants 1 and 2 hold
	 * through it only if a grant on a record missing or older than what its candidate saw
	 * waits one lease duration and takes a term above every term seen (issue 34).
	 */
	LOSE_STORE_DATA("lose-store-data"),

	/**
	 * The wall clock of node 0 (leader or not) jumps to one minute to six hours off,
	 * either way (F6, F7).
	 */
	CLOCK_JUMP("clock-jump");

	private final String id;

	FaultType(String id) {
		this.id = id;
	}

	String id() {
		return this.id;
	}

	/** Whether the fault acts on a node's own link to the store. */
	boolean needsNodeLink() {
		return switch (this) {
			case CUT_LEADER, CUT_FOLLOWER, SLOW_LEADER, SLOW_STORE, FLAP_CONNECTIONS, HANG_LEADER, ROGUE_LEADER,
					SKEW_LEADER ->
				true;
			default -> false;
		};
	}

	static FaultType of(String id) {
		return Arrays.stream(values())
			.filter((type) -> type.id.equals(id))
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("Unknown fault '" + id + "'"));
	}

	@Override
	public String toString() {
		return this.id;
	}

}
