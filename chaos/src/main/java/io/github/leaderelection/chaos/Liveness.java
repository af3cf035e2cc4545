package io.github.leaderelection.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Every interval of a run in which nobody led, the fault it is charged to, and whether it
 * ended within that fault's bound (issue 17). A gap is charged to every fault that
 * started during it or so shortly before it that it can have caused it (less than the
 * longest bound before), and must end by the latest of their deadlines:
 * <ul>
 * <li>the leader crashed or froze ({@code kill-leader}, {@code stop-leader}): the fault
 * plus the store's lease, 1.2 retry periods and the round trip of the acquire that ended
 * the gap. On ZooKeeper the lease is the session, which the server ends on its next tick
 * after the session timeout;</li>
 * <li>the leader stopped gracefully ({@code restart-leader}): the end of its belief plus
 * a retry period and that round trip;</li>
 * <li>the store itself went down ({@code restart-store}): from the moment it answers
 * again, as for a fault that leaves a working link;</li>
 * <li>any other fault, which leaves at least one candidate with a working store link: the
 * fault plus the lease and 2 retry periods, and that round trip;</li>
 * <li>no fault before it: the same, from the start of the gap.</li>
 * </ul>
 * The belief intervals are upper bounds (see {@link Checker}), so a gap measured here is
 * never longer than the real one by more than those bounds' slack; a process that is
 * paused, but whose belief has not ended yet, still counts as leading until its deadline.
 */
final class Liveness {

	/** One interval without a leader, and its verdict. */
	record Gap(long start, long end, String cause, long deadline) {

		long nanos() {
			return this.end - this.start;
		}

		boolean withinBound() {
			return this.end <= this.deadline;
		}

	}

	/** The durations the bounds are made of, in nanoseconds. */
	record Bounds(long lease, long retry) {

		static Bounds of(ChaosSettings settings) {
			long lease = settings.timing().leaseDuration().toNanos();
			if (settings.backend() == Backend.ZOOKEEPER) {
				lease = ChaosRun.zookeeperSessionTimeout(settings.timing()).toNanos()
						+ ZookeeperServer.TICK_MILLIS * 1_000_000L;
			}
			return new Bounds(lease, settings.timing().retryPeriod().toNanos());
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

		String describe() {
			return String.format(Locale.ROOT,
					"crash %d ms, graceful stop %d ms, other faults %d ms (each plus the round trip that ended the gap)",
					crash() / 1_000_000, graceful() / 1_000_000, workingLink() / 1_000_000);
		}

	}

	/** A fault as the harness recorded it. */
	record Fault(String type, long start, long end) {
	}

	private Liveness() {
	}

	/**
	 * The gaps between the spans with a believer, from the first belief to the end of the
	 * run.
	 * @param leading sorted, disjoint {start, end} spans with at least one believer
	 * @param roundTrips for the start of each span, the duration of the acquire call that
	 * began it (0 when unknown)
	 */
	static List<Gap> gaps(List<long[]> leading, RoundTrips roundTrips, List<Fault> faults, long runEnd, Bounds bounds) {
		List<Gap> gaps = new ArrayList<>();
		for (int i = 0; i < leading.size(); i++) {
			long start = leading.get(i)[1];
			if (start >= runEnd) {
				break;
			}
			boolean ended = i + 1 < leading.size() && leading.get(i + 1)[0] < runEnd;
			long end = ended ? leading.get(i + 1)[0] : runEnd;
			long roundTrip = ended ? roundTrips.of(end) : 0;
			gaps.add(charge(start, end, roundTrip, faults, bounds));
		}
		return gaps;
	}

	private static Gap charge(long start, long end, long roundTrip, List<Fault> faults, Bounds bounds) {
		String cause = "none";
		long deadline = start + bounds.workingLink() + roundTrip;
		boolean charged = false;
		for (Fault fault : faults) {
			// A fault that started longer ago than any bound cannot have caused it.
			if (fault.start() > start - bounds.workingLink() && fault.start() < end) {
				long faultDeadline = deadline(fault, start, bounds) + roundTrip;
				if (!charged || faultDeadline > deadline) {
					deadline = faultDeadline;
					cause = fault.type();
					charged = true;
				}
			}
		}
		return new Gap(start, end, cause, deadline);
	}

	private static long deadline(Fault fault, long gapStart, Bounds bounds) {
		return switch (FaultType.of(fault.type())) {
			case KILL_LEADER, STOP_LEADER -> fault.start() + bounds.crash();
			case RESTART_LEADER -> Math.max(fault.start(), gapStart) + bounds.graceful();
			case RESTART_STORE -> fault.end() + bounds.workingLink();
			default -> fault.start() + bounds.workingLink();
		};
	}

	/** The round trip of the acquire call that began a belief, by the belief's start. */
	@FunctionalInterface
	interface RoundTrips {

		long of(long beliefStart);

	}

}
