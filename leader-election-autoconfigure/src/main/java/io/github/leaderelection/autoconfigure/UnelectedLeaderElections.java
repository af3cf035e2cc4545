package io.github.leaderelection.autoconfigure;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.LeaderInfo;
import io.github.leaderelection.Leadership;

/**
 * The elections of an application whose leader election is switched off
 * ({@code leader-election.enabled=false}): this instance leads every group, unelected, in
 * term {@value #TERM}, so that code written for an election (a fence on the term, a look
 * at {@link LeaderElection#isLeader()}) runs unchanged.
 *
 * <p>
 * Term {@value #TERM} is below every elected term (elected terms start at 1): a fence
 * that an elected leader has written refuses this instance's writes, rather than this
 * instance overriding the fence for every later leader. Nothing ever changes, so
 * listeners are never called, and the operations that would move leadership fail.
 *
 * <p>
 * It is not a {@link LeaderElectionRegistry} bean: what reports on a real election (the
 * endpoint, the health indicator, the metrics, the test support) stays off.
 */
final class UnelectedLeaderElections {

	/** The term of every leadership without an election. */
	static final long TERM = 0;

	/**
	 * The engine's limit on group names, so that a name fails here as it would with an
	 * election.
	 */
	private static final int MAX_NAME_LENGTH = 255;

	private final String candidateId;

	private final Map<String, Election> elections = new ConcurrentHashMap<>();

	private final LeaderElectionRegistry registry = new Registry();

	UnelectedLeaderElections(String candidateId) {
		this.candidateId = Objects.requireNonNull(candidateId, "candidateId");
	}

	/** These elections as a registry, for the {@code @OnlyOnLeader} guard. */
	LeaderElectionRegistry registry() {
		return this.registry;
	}

	/**
	 * The same checks as the engine's ({@code engine.Names}): a group name that would
	 * fail startup with an election fails it without one too.
	 */
	private static String requireValidGroup(String group) {
		if (group == null || group.isBlank()) {
			throw new IllegalArgumentException("group must not be blank");
		}
		if (group.length() > MAX_NAME_LENGTH) {
			throw new IllegalArgumentException("group must be at most " + MAX_NAME_LENGTH + " characters, but '"
					+ group.substring(0, 32) + "...' has " + group.length());
		}
		if (group.chars().anyMatch(Character::isISOControl)) {
			throw new IllegalArgumentException("group must not contain control characters: '" + group.strip() + "'");
		}
		return group;
	}

	private final class Registry implements LeaderElectionRegistry {

		@Override
		public String candidateId() {
			return UnelectedLeaderElections.this.candidateId;
		}

		@Override
		public LeaderElection join(String group) {
			return UnelectedLeaderElections.this.elections.computeIfAbsent(requireValidGroup(group), Election::new);
		}

		@Override
		public Optional<LeaderElection> find(String group) {
			return Optional.ofNullable(UnelectedLeaderElections.this.elections.get(group));
		}

		@Override
		public Collection<LeaderElection> elections() {
			return List.copyOf(UnelectedLeaderElections.this.elections.values());
		}

		@Override
		public void addListener(LeaderElectionListener listener) {
			// Leadership never changes: there is nothing to tell a listener.
		}

		@Override
		public String toString() {
			return "UnelectedLeaderElections[candidateId=" + candidateId() + "]";
		}

	}

	private final class Election implements LeaderElection {

		private final String group;

		// Made once: leadership() is on the path of every @OnlyOnLeader call.
		private final Optional<Leadership> leadership;

		private final Optional<LeaderInfo> leader;

		Election(String group) {
			this.group = group;
			String candidateId = UnelectedLeaderElections.this.candidateId;
			this.leadership = Optional.of(new Leadership(group, candidateId, TERM, (term) -> true));
			this.leader = Optional.of(new LeaderInfo(group, candidateId, TERM));
		}

		@Override
		public String group() {
			return this.group;
		}

		@Override
		public String candidateId() {
			return UnelectedLeaderElections.this.candidateId;
		}

		@Override
		public boolean isLeader() {
			return true;
		}

		@Override
		public Optional<Leadership> leadership() {
			return this.leadership;
		}

		@Override
		public Optional<LeaderInfo> currentLeader() {
			return this.leader;
		}

		@Override
		public Optional<LeaderInfo> readLeader() {
			return this.leader;
		}

		@Override
		public boolean yieldLeadership() {
			throw disabled("yield it");
		}

		@Override
		public void forceLeader(String candidateId) {
			throw disabled("make '" + candidateId + "' its leader");
		}

		@Override
		public void forceReelection() {
			throw disabled("force a re-election");
		}

		private LeaderElectionException disabled(String operation) {
			return new LeaderElectionException("Cannot " + operation + ": leader election is disabled "
					+ "(leader-election.enabled=false), and this instance leads group '" + this.group
					+ "' without an election. Set leader-election.enabled=true to elect a leader.");
		}

		@Override
		public String toString() {
			return "UnelectedLeaderElection[group=" + this.group + ", candidateId=" + candidateId() + ", term=" + TERM
					+ "]";
		}

	}

}
