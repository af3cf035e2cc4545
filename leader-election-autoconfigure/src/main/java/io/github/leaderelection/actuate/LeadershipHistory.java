package io.github.leaderelection.actuate;

import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.leaderelection.LeaderInfo;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import org.jspecify.annotations.Nullable;

/**
 * The last leadership transitions of each group as this instance saw them, so that "why
 * did leadership move at 3 am" is answered from the endpoint without logs. Memory is
 * bounded: at most {@link #DEFAULT_SIZE} entries per group, and only for the groups this
 * instance takes part in.
 */
final class LeadershipHistory {

	/**
	 * Entries kept per group: a day of a flapping group is not the point, the last few
	 * moves are.
	 */
	static final int DEFAULT_SIZE = 20;

	private final Clock clock;

	private final int size;

	private final Map<String, Deque<LeadershipTransition>> groups = new ConcurrentHashMap<>();

	LeadershipHistory(Clock clock, int size) {
		this.clock = clock;
		this.size = size;
	}

	void granted(Leadership leadership) {
		add(leadership.group(),
				new LeadershipTransition(now(), "granted", leadership.term(), null, leadership.candidateId()));
	}

	void revoked(Leadership leadership, RevocationReason reason) {
		add(leadership.group(), new LeadershipTransition(now(), "revoked", leadership.term(), reason.name(), null));
	}

	void leaderChanged(String group, @Nullable LeaderInfo leader) {
		add(group, new LeadershipTransition(now(), "leader-changed", (leader != null) ? leader.term() : null, null,
				(leader != null) ? leader.candidateId() : null));
	}

	/**
	 * An administrator's action on the group through the endpoint: the type is
	 * {@code operator-action}, the reason the action and what became of it (such as
	 * {@code force-leader: asked} or {@code yield: limited}).
	 */
	void operatorAction(String group, String action, @Nullable String candidateId, String outcome) {
		add(group, new LeadershipTransition(now(), "operator-action", null, action + ": " + outcome, candidateId));
	}

	/** The group's transitions, oldest first. */
	List<LeadershipTransition> of(String group) {
		Deque<LeadershipTransition> transitions = this.groups.get(group);
		if (transitions == null) {
			return List.of();
		}
		synchronized (transitions) {
			return List.copyOf(transitions);
		}
	}

	private void add(String group, LeadershipTransition transition) {
		Deque<LeadershipTransition> transitions = this.groups.computeIfAbsent(group, (key) -> new ArrayDeque<>());
		synchronized (transitions) {
			transitions.addLast(transition);
			while (transitions.size() > this.size) {
				transitions.removeFirst();
			}
		}
	}

	private String now() {
		return this.clock.instant().truncatedTo(ChronoUnit.MILLIS).toString();
	}

}
