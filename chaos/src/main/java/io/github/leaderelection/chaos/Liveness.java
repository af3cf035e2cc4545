package io.github.leaderelection.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.etcd.EtcdLeaseStore;
import io.github.leaderelection.testing.ZookeeperServer;

/**
 * Every interval of a run in which nobody led, the fault it is charged to, and whether it
 * ended within that fault's bound (issue 17). A gap is charged to every fault that
 * started during it or ended so shortly before it that it can have caused it (less than
 * the longest bound before), and must end by the latest of their deadlines:
 * <ul>
 * <li>the leader crashed or froze ({@code kill-leader}, {@code stop-leader}): the fault
 * plus the store's lease, 1.2 retry periods and the round trip of the attempt that ended
 * the gap (a read and an acquire: twice the acquire's time, which is recorded). On
 * ZooKeeper the lease is the session, which the server ends on its next tick after the
 * session timeout;</li>
 * <li>the leader stopped gracefully ({@code restart-leader}): the return of its release
 * call plus a retry period and that round trip;</li>
 * <li>the store went down, or was slow or flapping for everyone ({@code restart-store},
 * {@code slow-store}, {@code flap-connections}): from the end of the fault, as for a
 * fault that leaves a working link;</li>
 * <li>the election's data lost or changed by hand ({@code lose-store-data}): from the
 * instant the change began, the lease and 2 retry periods, and that round trip. Whoever
 * finds the record missing or older than what it saw is granted the group but waits one
 * lease duration before it acts, because the holder of the lost record may still believe
 * it leads; it finds it at its next attempt, within 1.2 retry periods. A gap charged to
 * it and to another fault that kept the group from being taken (a leader cut off or
 * killed while its lease lived) ends by that fault's bound plus one lease: the take it
 * allows finds the record lost and waits;</li>
 * <li>any other fault, which leaves at least one candidate with a working store link: the
 * fault plus the lease and 2 retry periods, and that round trip;</li>
 * <li>no fault before it: the same, from the start of the gap; so too a gap that begins
 * only once the bound of every fault before it is over (the group had a leader until
 * then: those faults kept their promise);</li>
 * <li>a hand-over by balancing ({@code REBALANCED}: the leader ended its belief and
 * released the lease for another candidate to take), when the hand-over's belief is the
 * one whose end began the gap: the return of that release plus 2 retry periods and that
 * round trip (the others see the group free at their next read, within a retry period,
 * and a candidate that balancing does not give the group to holds back one more); a
 * release that never returned, from the start of the gap as for a fault that leaves a
 * working link;</li>
 * <li>on ZooKeeper, a fault on the leader's link ({@code cut-leader},
 * {@code hang-leader}, {@code rogue-leader}, {@code skew-leader}, and
 * {@code cut-follower}, whose target leads other groups when there are several) may also
 * end when the leader is back: the link's end plus the client's reconnect wait (up to 2
 * s, see {@link Bounds}) and 2 retry periods. What the leader sent during the fault
 * reaches the server when the link heals, as TCP retransmits it, so its session, and its
 * place in the queue, outlive any fault shorter than the session timeout.</li>
 * </ul>
 * With balancing on, every other bound gets one retry period more: a candidate already at
 * its share of the groups (in the view of its last balancing round, up to a retry period
 * old) holds back from a free group for one retry period, so that the candidate below its
 * share gets it; after a crash, until the crashed candidate's entry on the list of live
 * candidates runs out, that can be every candidate.
 * <p>
 * With several groups, each group has its own gaps; a fault of the harness (aimed at a
 * process or at the store) is charged to the gaps of every group, a hand-over only to
 * those of its own group.
 * <p>
 * Each bound counts from the moment a process other than the fault's target runs its
 * election: a candidate that is still starting cannot take over. The belief intervals are
 * upper bounds (see {@link Checker}), so a gap measured here is never longer than the
 * real one by more than those bounds' slack; a process that is paused, but whose belief
 * has not ended yet, still counts as leading until its deadline.
 * <p>
 * The bounds assume the process that takes over runs. Time it demonstrably did not (its 1
 * ms probe saw more than 20 ms pass, outside any fault aimed at it: the JVM collected
 * garbage, or the machine's cores were busy with the other JVMs) is added to its bound,
 * and reported: on the two cores the default build runs on, a restarted node's JVM
 * start-up alone can hold the others up for a hundred milliseconds. An election that
 * waits for nothing does not stall its process, so the allowance cannot hide one.
 */
final class Liveness {

	/**
	 * One interval without a leader, and its verdict.
	 *
	 * @param group the group without a leader
	 * @param deadline when it had to end: its bound, plus the stall
	 * @param stall how long the process that ended it was stalled during it (not
	 * scheduled, or collecting garbage: its 1 ms probe saw more than 20 ms pass), which
	 * the bound allows for
	 * @param handOverDeadline when a gap that a hand-over began had to end by the
	 * hand-over's bound alone, plus the stall (a fault under way at the same time may
	 * allow longer: {@code deadline} is the latest); 0 for a gap that no hand-over began
	 */
	record Gap(String group, long start, long end, String cause, long deadline, long stall, long handOverDeadline) {

		long nanos() {
			return this.end - this.start;
		}

		boolean withinBound() {
			return this.end <= this.deadline;
		}

		boolean begunByHandOver() {
			return this.handOverDeadline != 0;
		}

		/** Whether it ended within the bound of the hand-over that began it. */
		boolean withinHandOverBound() {
			return this.end <= this.handOverDeadline;
		}

	}

	/**
	 * The durations the bounds are made of, in nanoseconds.
	 *
	 * @param lease how long the store keeps a lease nobody renews
	 * @param retry the retry period
	 * @param sessionReconnect 0, or on ZooKeeper the time its client waits before it
	 * connects again: a link fault ends there only once the cut-off leader is back,
	 * because what it sent during the fault reaches the server when the link heals (TCP
	 * retransmits), keeping its session, and with it its place, alive. ZooKeeper's client
	 * sleeps up to 1 s before every connect after the first, and 1 s more when it has
	 * tried every server address since it was last connected: with the one address each
	 * node has here, every reconnect; 2 s in all
	 * @param holdBack with balancing, one retry period: how long a candidate at its share
	 * may leave a free group to one below it; 0 without balancing
	 * @param lostLeaseKeyWait on etcd 1 s, else 0: a lease key deleted while its holder's
	 * etcd lease lives is waited out for that lease's TTL, which etcd tells in whole
	 * seconds, plus one
	 */
	record Bounds(long lease, long retry, long sessionReconnect, long holdBack, long lostLeaseKeyWait) {

		static Bounds of(ChaosSettings settings) {
			// The nodes' longest lease and retry period: whoever crashed, whoever takes
			// over.
			ElectionTiming timing = settings.longest();
			long lease = timing.leaseDuration().toNanos();
			long reconnect = 0;
			if (settings.backend() == Backend.ETCD) {
				// etcd counts a lease's TTL in whole seconds: the store rounds it up.
				lease = Duration.ofSeconds(EtcdLeaseStore.ttlSeconds(timing.leaseDuration())).toNanos();
			}
			if (settings.backend() == Backend.ZOOKEEPER) {
				reconnect = Duration.ofSeconds(2).toNanos();
				lease = ChaosRun.zookeeperSessionTimeout(timing).toNanos() + ZookeeperServer.TICK_MILLIS * 1_000_000L;
			}
			long retry = timing.retryPeriod().toNanos();
			long lostLeaseKeyWait = (settings.backend() == Backend.ETCD) ? Duration.ofSeconds(1).toNanos() : 0;
			return new Bounds(lease, retry, reconnect, settings.balance() ? retry : 0, lostLeaseKeyWait);
		}

		long crash() {
			return this.lease + this.retry * 12 / 10;
		}

		long graceful() {
			return this.retry;
		}

		long workingLink() {
			return this.lease + 2 * this.retry;
		}

		/**
		 * From the start of a {@code lose-store-data} fault: the next holder's read
		 * within a retry period (with jitter), then the lease duration it waits out
		 * before it acts. The lease is the store's, which is never shorter than the
		 * candidate's (etcd rounds it up to whole seconds, and a deleted record may leave
		 * the old holder's etcd lease to run out).
		 */
		long lostData() {
			return this.lease + this.lostLeaseKeyWait + 2 * this.retry;
		}

		/**
		 * From the start of a {@code lose-store-data} fault that restored an older copy:
		 * the copy may bring back a lease that still runs by the store's clock, for up to
		 * a lease duration, which the next holder waits for before it takes the record;
		 * the record being older than a term it saw, it then waits as after any loss.
		 */
		long restoredData() {
			return this.lease + lostData();
		}

		/**
		 * From the return of the release of a hand-over, before the hold-back: the others
		 * read the group within a retry period.
		 */
		long handOver() {
			return this.retry;
		}

		String describe() {
			String text = String.format(Locale.ROOT,
					"crash %d ms, graceful stop %d ms, lost store data %d ms, other faults %d ms",
					(crash() + this.holdBack) / 1_000_000, (graceful() + this.holdBack) / 1_000_000,
					(lostData() + this.holdBack) / 1_000_000, (workingLink() + this.holdBack) / 1_000_000);
			if (this.holdBack > 0) {
				text += String.format(Locale.ROOT,
						", hand-over %d ms from its release (each with %d ms of balancing hold-back)",
						(handOver() + this.holdBack) / 1_000_000, this.holdBack / 1_000_000);
			}
			text += "; each plus the round trip that ended the gap";
			return (this.sessionReconnect == 0) ? text
					: text + String.format(Locale.ROOT, "; a leader's link fault: or until %d ms after it ends",
							(this.sessionReconnect + 2 * this.retry + this.holdBack) / 1_000_000);
		}

	}

	/** What a hand-over is called where a fault's type goes. */
	static final String HAND_OVER = "hand-over";

	/**
	 * A fault as the harness recorded it; its target is a process key or "store". Or a
	 * hand-over ({@link #HAND_OVER}) of a group by the process {@code target}: from the
	 * end of its belief to the return of its release ({@code Long.MAX_VALUE} if none
	 * returned).
	 *
	 * @param group the group it concerns, or null for every group (a fault of the
	 * harness)
	 * @param detail what the harness logged of it ({@code "-"} if nothing), such as the
	 * way a {@code lose-store-data} fault lost the data
	 */
	record Fault(String type, long start, long end, String target, String group, String detail) {

		Fault(String type, long start, long end, String target, String detail) {
			this(type, start, end, target, null, detail);
		}

		/** A {@code lose-store-data} fault that wrote an older copy back. */
		boolean isRestore() {
			return isRestore(this.type, this.detail);
		}

		/**
		 * Whether a fault of this type and detail, as the harness logs them, wrote an
		 * older copy back.
		 */
		static boolean isRestore(String type, String detail) {
			return FaultType.LOSE_STORE_DATA.id().equals(type) && detail != null
					&& detail.startsWith(LostStoreData.Variant.RESTORE.id() + ":");
		}

		boolean isHandOver() {
			return HAND_OVER.equals(this.type);
		}

	}

	private Liveness() {
	}

	/**
	 * The gaps of one group between the spans with a believer, from the first belief to
	 * the end of the run.
	 * @param leading sorted, disjoint {start, end} spans with at least one believer
	 * @param roundTrips for the start of each span, the duration of the acquire call that
	 * began it (0 when unknown)
	 * @param faults the faults of the harness and the group's hand-overs
	 */
	static List<Gap> gaps(String group, List<long[]> leading, RoundTrips roundTrips, Stalls stalls,
			Candidates candidates, List<Fault> faults, long runEnd, Bounds bounds) {
		List<Gap> gaps = new ArrayList<>();
		for (int i = 0; i < leading.size(); i++) {
			long start = leading.get(i)[1];
			if (start >= runEnd) {
				break;
			}
			boolean ended = i + 1 < leading.size() && leading.get(i + 1)[0] < runEnd;
			long end = ended ? leading.get(i + 1)[0] : runEnd;
			// The attempt that took over is a read and an acquire; only the acquire is
			// timed, and the read takes as long.
			long roundTrip = ended ? 2 * roundTrips.of(end) : 0;
			long stall = ended ? stalls.of(end, start, end) : 0;
			gaps.add(charge(group, start, end, roundTrip, stall, candidates, faults, bounds));
		}
		return gaps;
	}

	private static Gap charge(String group, long start, long end, long roundTrip, long stall, Candidates candidates,
			List<Fault> faults, Bounds bounds) {
		String cause = "none";
		long deadline = saturatedAdd(candidates.takeOverPossibleFrom(start, ""), bounds.workingLink() + roundTrip);
		boolean charged = false;
		boolean lostData = false;
		// The latest deadline of the charged faults other than lost data, and its fault.
		long otherDeadline = Long.MIN_VALUE;
		String otherCause = null;
		long handOverDeadline = 0;
		for (Fault fault : faults) {
			if (fault.group() != null && !fault.group().equals(group)) {
				continue;
			}
			// A hand-over is charged with the gap its own end began; a fault that ended
			// longer ago than any bound cannot have caused it.
			boolean causes = fault.isHandOver() ? fault.start() == start
					: fault.end() > start - bounds.workingLink() && fault.start() < end;
			if (causes) {
				long faultDeadline = saturatedAdd(deadline(group, fault, start, roundTrip, candidates, bounds),
						roundTrip);
				if (!fault.isHandOver() && saturatedAdd(faultDeadline, bounds.holdBack() + stall) <= start) {
					// The group had a leader until the fault's bound was over: the fault
					// kept its promise, and a gap that begins later is not its doing (a
					// hand-over whose revocation the killed giver never recorded, say).
					continue;
				}
				if (fault.isHandOver()) {
					handOverDeadline = saturatedAdd(faultDeadline, bounds.holdBack() + stall);
				}
				boolean lost = FaultType.LOSE_STORE_DATA.toString().equals(fault.type());
				lostData |= lost;
				if (!lost && (otherCause == null || faultDeadline > otherDeadline)) {
					otherDeadline = faultDeadline;
					otherCause = fault.type();
				}
				if (!charged || faultDeadline > deadline) {
					deadline = faultDeadline;
					cause = fault.type();
					charged = true;
				}
			}
		}
		if (lostData && otherCause != null) {
			// Another fault kept the group from being taken until its own bound (a
			// leader cut off or killed with its lease live): the take it allows then
			// finds the record lost, and waits one lease more. Whichever is later, that
			// or the loss's own bound: a loss whose bound ends after the other fault's
			// still leaves the take that fault allows to wait.
			long afterOther = saturatedAdd(otherDeadline, bounds.lease() + bounds.lostLeaseKeyWait());
			if (afterOther > deadline) {
				deadline = afterOther;
				cause = otherCause;
			}
		}
		return new Gap(group, start, end, cause, saturatedAdd(deadline, bounds.holdBack() + stall), stall,
				handOverDeadline);
	}

	/**
	 * The fault's deadline. Its bound counts from the moment the fault is under way and a
	 * process other than its target runs its election: right after a restart the other
	 * candidates may still be starting their JVMs, and nobody can take over before one
	 * does.
	 */
	private static long deadline(String group, Fault fault, long gapStart, long roundTrip, Candidates candidates,
			Bounds bounds) {
		if (fault.isHandOver()) {
			// From the return of the release; a release that did not return may not have
			// landed, and then the lease runs out.
			return (fault.end() == Long.MAX_VALUE)
					? saturatedAdd(candidates.takeOverPossibleFrom(gapStart, fault.target()), bounds.workingLink())
					: saturatedAdd(candidates.takeOverPossibleFrom(fault.end(), fault.target()), bounds.handOver());
		}
		FaultType type = FaultType.of(fault.type());
		long from = switch (type) {
			// From the release: the leader-only work it waited for before is the
			// application's.
			case RESTART_LEADER -> candidates.releaseReturned(fault.target(), group, Math.max(fault.start(), gapStart));
			case RESTART_STORE, FAILOVER_STORE, SLOW_STORE, FLAP_CONNECTIONS -> fault.end();
			default -> fault.start();
		};
		long clock = candidates.takeOverPossibleFrom(from, fault.target());
		if (bounds.sessionReconnect() > 0 && (type == FaultType.CUT_LEADER || type == FaultType.CUT_FOLLOWER
				|| type == FaultType.HANG_LEADER || type == FaultType.ROGUE_LEADER || type == FaultType.SKEW_LEADER)) {
			// ZooKeeper: the session outlives a link fault shorter than the session
			// timeout; the cut-off leader gives up its place once it is back. (With
			// several groups a "follower" of one group leads others.)
			long back = fault.end() + bounds.sessionReconnect() + 2 * bounds.retry();
			return Math.max(saturatedAdd(clock, bounds.workingLink()), back);
		}
		long bound = switch (type) {
			case KILL_LEADER, STOP_LEADER -> bounds.crash();
			case RESTART_LEADER -> bounds.graceful();
			case LOSE_STORE_DATA -> fault.isRestore() ? bounds.restoredData() : bounds.lostData();
			default -> bounds.workingLink();
		};
		return saturatedAdd(clock, bound);
	}

	private static long saturatedAdd(long time, long duration) {
		return (time == Long.MAX_VALUE) ? Long.MAX_VALUE : time + duration;
	}

	/**
	 * When a process other than the excluded one can take over: the first instant at or
	 * after a given one at which it runs its election, {@code Long.MAX_VALUE} if none
	 * does.
	 */
	interface Candidates {

		long takeOverPossibleFrom(long from, String excluded);

		/**
		 * When the first release call of the process in the group at or after
		 * {@code from} returned, or {@code from} if none did.
		 */
		long releaseReturned(String key, String group, long from);

	}

	/**
	 * How long the process of the belief that began at {@code beliefStart} was stalled
	 * between two instants.
	 */
	@FunctionalInterface
	interface Stalls {

		long of(long beliefStart, long from, long to);

	}

	/** The round trip of the acquire call that began a belief, by the belief's start. */
	@FunctionalInterface
	interface RoundTrips {

		long of(long beliefStart);

	}

}
