package io.github.leaderelection.engine;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.engine.GroupMachine.Effect;
import io.github.leaderelection.engine.GroupMachine.Event;
import io.github.leaderelection.engine.GroupMachine.Next;
import io.github.leaderelection.engine.GroupMachine.Step;
import io.github.leaderelection.engine.GroupState.Belief;
import io.github.leaderelection.engine.GroupState.Leading;
import io.github.leaderelection.engine.GroupState.Lost;
import io.github.leaderelection.engine.GroupState.Pending;
import io.github.leaderelection.engine.GroupState.Releasing;
import io.github.leaderelection.engine.GroupState.Stopped;
import io.github.leaderelection.spi.Lease;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static io.github.leaderelection.RevocationReason.FORCED_ELSEWHERE;
import static io.github.leaderelection.RevocationReason.LEASE_LOST;
import static io.github.leaderelection.RevocationReason.REBALANCED;
import static io.github.leaderelection.RevocationReason.SHUTDOWN;
import static io.github.leaderelection.RevocationReason.STORE_ERROR;
import static io.github.leaderelection.RevocationReason.YIELDED;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The transition function of a group's election, as a table: in a state, on an event, the
 * next state, when the next step is taken, and the effects, in order. Times are in
 * nanoseconds: a retry period of 1,000 and a renew deadline of 10,000. Every pair of a
 * state's type and an event's type has a row; pairs where nothing happens are listed at
 * the end.
 */
class GroupMachineTests {

	static final long RETRY = 1_000;

	static final long RENEW_DEADLINE = 10_000;

	static final String ME = "me";

	static final GroupMachine machine = new GroupMachine("g", ME, RENEW_DEADLINE, RETRY, (term) -> false);

	/** Term 1, held by this candidate, to act on at once. */
	static final Lease OURS = lease(ME, 1, 0);

	/** Term 2, taken over from a holder whose lease runs out in 2,500. */
	static final Lease TAKEN_OVER = lease(ME, 2, 2_500);

	/** {@link #OURS} as a renewal that wrote handed it out, with a new version. */
	static final Lease OURS_RENEWED = new Lease("g", ME, 1, Duration.ofSeconds(15), Duration.ZERO, 7);

	static final Lease TAKEN_OVER_RENEWED = new Lease("g", ME, 2, Duration.ofSeconds(15), Duration.ofNanos(500), 8);

	static final Lease OTHERS = lease("other", 3, 0);

	static final Belief BELIEF = belief(1, 10_000, 0);

	static final GroupState FOLLOWING = GroupState.FOLLOWING;

	static final GroupState LEADING = new Leading(OURS, BELIEF);

	static final GroupState PENDING = new Pending(TAKEN_OVER, 2_600);

	static final GroupState LOST = new Lost(BELIEF);

	static final GroupState RELEASING = new Releasing(OURS, false);

	static final GroupState HANDING_OVER = new Releasing(OURS, true);

	static final GroupState STOPPED_HOLDING = new Stopped(OURS);

	static final GroupState STOPPED = new Stopped(null);

	static List<Row> table() {
		List<Row> rows = new ArrayList<>();
		// Starting
		rows.add(row(GroupState.NOT_STARTED, new Event.Start(), FOLLOWING, Next.ROUND));

		// Taking the lease: believed at once from the request's start, unless the answer
		// took the whole renew deadline; pending while an earlier holder's lease may run
		rows.add(row(FOLLOWING, acquired(OURS, 0, 5), new Leading(OURS, belief(1, RENEW_DEADLINE, 5)), Next.ROUND,
				granted(1)));
		rows.add(row(FOLLOWING, acquired(OURS, 0, RENEW_DEADLINE), RELEASING, Next.NOW,
				new Effect.AnsweredTooLate(OURS, RENEW_DEADLINE), new Effect.StayOut(RETRY, 1)));
		rows.add(row(FOLLOWING, acquired(TAKEN_OVER, 0, 100), new Pending(TAKEN_OVER, 2_600), Next.after(RETRY)));
		rows.add(row(LOST, acquired(TAKEN_OVER, 0, 5), new Pending(TAKEN_OVER, 2_505), Next.after(RETRY),
				revoked(1, LEASE_LOST)));
		rows.add(row(LEADING, acquired(OTHERS, 0, 5), new Leading(OTHERS, belief(3, RENEW_DEADLINE, 5)), Next.ROUND,
				revoked(1, LEASE_LOST), new Effect.Granted(leadership(3))));
		rows.add(row(RELEASING, acquired(OTHERS, 0, 5), new Leading(OTHERS, belief(3, RENEW_DEADLINE, 5)), Next.ROUND,
				new Effect.Granted(leadership(3))));
		rows.add(row(PENDING, acquired(OURS, 0, 5), new Leading(OURS, belief(1, RENEW_DEADLINE, 5)), Next.ROUND,
				granted(1)));
		rows.add(row(GroupState.NOT_STARTED, acquired(OURS, 0, 5), GroupState.NOT_STARTED, Next.ROUND,
				new Effect.Release(OURS)));
		rows.add(row(STOPPED, acquired(OURS, 0, 5), STOPPED, Next.ROUND, new Effect.Release(OURS)));
		rows.add(row(STOPPED_HOLDING, acquired(OURS, 0, 5), STOPPED_HOLDING, Next.ROUND, new Effect.Release(OURS)));

		// Renewing: extends the belief from the renewal's start; a deadline that passed
		// during the call ends it whatever the store says
		rows.add(
				row(LEADING, renewed(OURS, BELIEF, 2_000, 2_100), new Leading(OURS, belief(1, 12_000, 0)), Next.ROUND));
		rows.add(row(LEADING, renewed(OURS, BELIEF, 2_000, 10_000), RELEASING, Next.NOW, revoked(1, STORE_ERROR),
				new Effect.StayOut(RETRY, 1)));
		rows.add(row(LEADING, renewed(OURS, belief(1, 10_000, 0), 2_000, 2_100), LEADING, Next.NOW));
		rows.add(row(LEADING, renewed(OTHERS, null, 2_000, 2_100), LEADING, Next.ROUND));
		rows.add(row(RELEASING, renewed(OURS, BELIEF, 2_000, 2_100), RELEASING, Next.NOW));
		rows.add(row(PENDING, renewed(TAKEN_OVER, null, 2_600, 2_700),
				new Leading(TAKEN_OVER, belief(2, 12_600, 2_700)), Next.ROUND, granted(2)));
		rows.add(row(PENDING, renewed(TAKEN_OVER, null, 2_000, 2_100), PENDING, Next.after(600)));
		rows.add(row(PENDING, renewed(TAKEN_OVER, null, 2_600, 12_600), new Releasing(TAKEN_OVER, false), Next.NOW,
				new Effect.AnsweredTooLate(TAKEN_OVER, RENEW_DEADLINE), new Effect.StayOut(RETRY, 2)));
		rows.add(row(PENDING, renewed(TAKEN_OVER, BELIEF, 2_600, 2_700), PENDING, Next.NOW));
		// A renewal that hands out a new version of the lease: the next renewal, the
		// grant and the release name that one
		rows.add(row(LEADING, renewedAs(OURS, OURS_RENEWED, BELIEF, 2_000, 2_100),
				new Leading(OURS_RENEWED, belief(1, 12_000, 0)), Next.ROUND));
		rows.add(row(LEADING, renewedAs(OURS, OURS_RENEWED, BELIEF, 2_000, 10_000), new Releasing(OURS_RENEWED, false),
				Next.NOW, revoked(1, STORE_ERROR), new Effect.StayOut(RETRY, 1)));
		rows.add(row(RELEASING, renewedAs(OURS, OURS_RENEWED, BELIEF, 2_000, 2_100), new Releasing(OURS_RENEWED, false),
				Next.NOW));
		rows.add(row(PENDING, renewedAs(TAKEN_OVER, TAKEN_OVER_RENEWED, null, 2_000, 2_100),
				new Pending(TAKEN_OVER_RENEWED, 2_600), Next.after(600)));
		rows.add(row(PENDING, renewedAs(TAKEN_OVER, TAKEN_OVER_RENEWED, null, 2_600, 2_700),
				new Leading(TAKEN_OVER_RENEWED, belief(2, 12_600, 2_700)), Next.ROUND, granted(2)));

		// A refused renewal: the belief ends at once, the store is asked why, and the
		// revocation says it
		rows.add(row(LEADING, new Event.Refused(OURS), LOST, Next.ROUND, new Effect.ReadWhy()));
		rows.add(row(LEADING, new Event.Refused(OTHERS), LEADING, Next.ROUND));
		rows.add(row(PENDING, new Event.Refused(TAKEN_OVER), FOLLOWING, Next.ROUND, new Effect.ReadWhy()));
		rows.add(row(RELEASING, new Event.Refused(OURS), RELEASING, Next.ROUND, new Effect.ReadWhy()));
		rows.add(row(LOST, new Event.LostAs(OTHERS), FOLLOWING, Next.ROUND, revoked(1, FORCED_ELSEWHERE)));
		rows.add(row(LOST, new Event.LostAs(null), FOLLOWING, Next.ROUND, revoked(1, LEASE_LOST)));
		rows.add(row(LOST, new Event.LostAs(OURS), FOLLOWING, Next.ROUND, revoked(1, LEASE_LOST)));

		// The deadline: the belief ends, and the lease is released; after store trouble
		// the others get the first try
		rows.add(row(LEADING, new Event.DeadlinePassed(BELIEF, false, 10_000), RELEASING, Next.NOW,
				revoked(1, LEASE_LOST)));
		rows.add(row(LEADING, new Event.DeadlinePassed(BELIEF, true, 10_000), RELEASING, Next.NOW,
				revoked(1, STORE_ERROR), new Effect.StayOut(RETRY, 1)));
		rows.add(row(LEADING, new Event.DeadlinePassed(BELIEF, false, 9_999), LEADING, Next.ROUND));
		rows.add(row(LEADING, new Event.DeadlinePassed(belief(1, 10_000, 0), false, 10_000), LEADING, Next.ROUND));

		// Giving up: a yield, or a hand-over, which queues again once released
		rows.add(row(LEADING, new Event.GiveUp(YIELDED), RELEASING, Next.NOW, revoked(1, YIELDED),
				new Effect.StayOut(2 * RETRY, 1)));
		rows.add(row(LEADING, new Event.GiveUp(REBALANCED), HANDING_OVER, Next.NOW, revoked(1, REBALANCED),
				new Effect.StayOut(2 * RETRY, 1)));
		rows.add(row(PENDING, new Event.GiveUp(YIELDED), new Releasing(TAKEN_OVER, false), Next.NOW,
				new Effect.StayOut(2 * RETRY, 2)));
		rows.add(row(RELEASING, new Event.Released(OURS), FOLLOWING, Next.ROUND));
		rows.add(row(HANDING_OVER, new Event.Released(OURS), FOLLOWING, Next.ROUND, new Effect.Requeue()));
		rows.add(row(RELEASING, new Event.Released(OTHERS), RELEASING, Next.ROUND));

		// An administrator's change elsewhere: nothing of ours is left to believe or
		// release
		rows.add(row(LEADING, new Event.ForcedElsewhere(), FOLLOWING, Next.NOW, revoked(1, FORCED_ELSEWHERE)));
		rows.add(row(LOST, new Event.ForcedElsewhere(), FOLLOWING, Next.NOW, revoked(1, FORCED_ELSEWHERE)));
		rows.add(row(PENDING, new Event.ForcedElsewhere(), FOLLOWING, Next.NOW));
		rows.add(row(RELEASING, new Event.ForcedElsewhere(), FOLLOWING, Next.NOW));
		rows.add(row(FOLLOWING, new Event.ForcedElsewhere(), FOLLOWING, Next.NOW));
		rows.add(row(STOPPED_HOLDING, new Event.ForcedElsewhere(), STOPPED, Next.NOW));

		// Stopping: the lease held stays for leaving
		rows.add(row(LEADING, new Event.Stop(), STOPPED_HOLDING, Next.ROUND, revoked(1, SHUTDOWN)));
		rows.add(row(LOST, new Event.Stop(), STOPPED, Next.ROUND, revoked(1, LEASE_LOST)));
		rows.add(row(PENDING, new Event.Stop(), new Stopped(TAKEN_OVER), Next.ROUND));
		rows.add(row(RELEASING, new Event.Stop(), STOPPED_HOLDING, Next.ROUND));
		rows.add(row(FOLLOWING, new Event.Stop(), STOPPED, Next.ROUND));
		rows.add(row(GroupState.NOT_STARTED, new Event.Stop(), STOPPED, Next.ROUND));

		// Leaving once stopped: a lease still held is released
		rows.add(row(STOPPED_HOLDING, new Event.Leave(), STOPPED, Next.ROUND, new Effect.Release(OURS)));
		Stream.of(GroupState.NOT_STARTED, FOLLOWING, LEADING, PENDING, LOST, RELEASING, STOPPED)
			.forEach((state) -> rows.add(row(state, new Event.Leave(), state, Next.ROUND)));

		// A failed call: a leader retries at once, then four times a period; a lease to
		// release or wait out a period later; a follower in the next round
		rows.add(row(LEADING, new Event.Failed(1), LEADING, Next.NOW));
		rows.add(row(LEADING, new Event.Failed(2), LEADING, Next.after(RETRY / 4)));
		rows.add(row(PENDING, new Event.Failed(1), PENDING, Next.after(RETRY)));
		rows.add(row(RELEASING, new Event.Failed(1), RELEASING, Next.after(RETRY)));
		rows.add(row(FOLLOWING, new Event.Failed(1), FOLLOWING, Next.ROUND));
		rows.add(row(LOST, new Event.Failed(1), LOST, Next.ROUND));
		rows.add(row(STOPPED, new Event.Failed(1), STOPPED, Next.ROUND));
		rows.add(row(GroupState.NOT_STARTED, new Event.Failed(1), GroupState.NOT_STARTED, Next.ROUND));

		// Nothing happens: the event does not concern the state
		Stream.of(FOLLOWING, LEADING, PENDING, LOST, RELEASING, STOPPED)
			.forEach((state) -> rows.add(row(state, new Event.Start(), state, Next.ROUND)));
		Stream.of(GroupState.NOT_STARTED, FOLLOWING, LOST, STOPPED)
			.forEach((state) -> rows.add(row(state, renewed(OURS, BELIEF, 0, 1), state, Next.ROUND)));
		Stream.of(GroupState.NOT_STARTED, FOLLOWING, LOST, STOPPED_HOLDING)
			.forEach((state) -> rows.add(row(state, new Event.Refused(OURS), state, Next.ROUND)));
		Stream.of(GroupState.NOT_STARTED, FOLLOWING, LEADING, PENDING, RELEASING, STOPPED)
			.forEach((state) -> rows.add(row(state, new Event.LostAs(OTHERS), state, Next.ROUND)));
		Stream.of(GroupState.NOT_STARTED, FOLLOWING, PENDING, LOST, RELEASING, STOPPED)
			.forEach(
					(state) -> rows.add(row(state, new Event.DeadlinePassed(BELIEF, true, 20_000), state, Next.ROUND)));
		Stream.of(GroupState.NOT_STARTED, FOLLOWING, LOST, RELEASING, STOPPED)
			.forEach((state) -> rows.add(row(state, new Event.GiveUp(YIELDED), state, Next.NOW)));
		rows.add(row(GroupState.NOT_STARTED, new Event.ForcedElsewhere(), GroupState.NOT_STARTED, Next.NOW));
		rows.add(row(STOPPED_HOLDING, new Event.Stop(), STOPPED_HOLDING, Next.ROUND));
		Stream.of(GroupState.NOT_STARTED, FOLLOWING, LEADING, PENDING, LOST, STOPPED_HOLDING)
			.forEach((state) -> rows.add(row(state, new Event.Released(OURS), state, Next.ROUND)));
		return rows;
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("table")
	void transition(Row row) {
		Step step = machine.next(row.state(), row.event());
		assertThat(step.state()).as("next state").isEqualTo(row.expectedState());
		assertThat(step.next()).as("next step").isEqualTo(row.expectedNext());
		assertThat(step.effects()).as("effects").containsExactly(row.expectedEffects());
	}

	@Test
	void theTableHasARowForEveryStateAndEvent() {
		Set<String> covered = new HashSet<>();
		table().forEach((row) -> covered.add(name(row.state().getClass()) + " on " + name(row.event().getClass())));
		List<String> missing = new ArrayList<>();
		for (Class<?> state : GroupState.class.getPermittedSubclasses()) {
			for (Class<?> event : Event.class.getPermittedSubclasses()) {
				if (!covered.contains(name(state) + " on " + name(event))) {
					missing.add(name(state) + " on " + name(event));
				}
			}
		}
		assertThat(missing).isEmpty();
	}

	@Test
	void everyStateShowsAsAPhase() {
		assertThat(Stream.of(GroupState.NOT_STARTED, FOLLOWING, LEADING, PENDING, LOST, RELEASING, STOPPED)
			.map((state) -> state.phase(0))).containsExactly(GroupPhase.NOT_STARTED, GroupPhase.FOLLOWING,
					GroupPhase.LEADING, GroupPhase.PENDING, GroupPhase.LOSING, GroupPhase.RELEASING,
					GroupPhase.STOPPED);
		assertThat(LEADING.phase(10_000)).isEqualTo(GroupPhase.LOSING);
		assertThat(Arrays.stream(GroupState.class.getPermittedSubclasses()).map(GroupMachineTests::name))
			.containsExactlyInAnyOrder("NotStarted", "Following", "Pending", "Leading", "Lost", "Releasing", "Stopped");
	}

	@Test
	void theStateDiagramInContributingDrawsEveryTransitionOfTheTable() throws IOException {
		String contributing = Files.readString(GroupPhaseTests.contributing());
		int start = contributing.indexOf("```mermaid\nstateDiagram-v2\n    [*] --> NotStarted");
		assertThat(start).as("the diagram of GroupState in CONTRIBUTING.md").isNotNegative();
		String diagram = contributing.substring(start, contributing.indexOf("```", start + 3));
		Set<String> drawn = new TreeSet<>();
		Matcher arrows = Pattern.compile("(\\w+) --> (\\w+): (\\w+)").matcher(diagram);
		while (arrows.find()) {
			drawn.add(arrows.group(1) + " --> " + arrows.group(2) + ": " + arrows.group(3));
		}
		Set<String> changes = new TreeSet<>();
		for (Row row : table()) {
			if (!row.expectedState().equals(row.state())) {
				changes.add(name(row.state().getClass()) + " --> " + name(row.expectedState().getClass()) + ": "
						+ name(row.event().getClass()));
			}
		}
		assertThat(drawn).as("drawn: %n    %s%n", String.join("\n    ", changes)).isEqualTo(changes);
	}

	private static String name(Class<?> type) {
		return type.getSimpleName();
	}

	static Row row(GroupState state, Event event, GroupState expectedState, Next expectedNext,
			Effect... expectedEffects) {
		return new Row(state, event, expectedState, expectedNext, expectedEffects);
	}

	static Event.Acquired acquired(Lease lease, long start, long end) {
		return new Event.Acquired(lease, start, end, end);
	}

	static Event.Renewed renewed(Lease lease, Belief before, long start, long at) {
		return new Event.Renewed(lease, before, start, at);
	}

	static Event.Renewed renewedAs(Lease lease, Lease renewed, Belief before, long start, long at) {
		return new Event.Renewed(lease, renewed, before, start, at);
	}

	static Lease lease(String holder, long term, long activeInNanos) {
		return new Lease("g", holder, term, Duration.ofSeconds(15), Duration.ofNanos(activeInNanos));
	}

	static Leadership leadership(long term) {
		return new Leadership("g", ME, term, (t) -> false);
	}

	static Belief belief(long term, long deadline, long granted) {
		return new Belief(leadership(term), deadline, granted);
	}

	static Effect granted(long term) {
		return new Effect.Granted(leadership(term));
	}

	static Effect revoked(long term, RevocationReason reason) {
		return new Effect.Revoked(leadership(term), reason);
	}

	record Row(GroupState state, Event event, GroupState expectedState, Next expectedNext, Effect[] expectedEffects) {

		@Override
		public String toString() {
			return describe(this.state) + " on " + this.event + " -> " + describe(this.expectedState) + ", "
					+ describe(this.expectedNext) + Arrays.toString(this.expectedEffects);
		}

		private static String describe(GroupState state) {
			return state.getClass().getSimpleName();
		}

		private static String describe(Next next) {
			return next.round() ? "next round " : "own attempt in " + next.delayNanos() + " ";
		}

	}

}
