package io.github.leaderelection.actuate;

import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.LeaderInfo;
import io.github.leaderelection.engine.ElectionStatus;
import io.github.leaderelection.engine.GroupPhase;
import io.github.leaderelection.engine.LeaderElectionEngine;
import org.jspecify.annotations.Nullable;

/**
 * One group's election as the health indicator and the endpoint show it, taken without
 * I/O.
 *
 * @param election the group's election
 * @param leading whether this instance leads
 * @param leader the leader as this instance last observed it, if known
 * @param leaseRemaining while leading, the time left before this instance stops leading
 * unless it renews
 * @param backend the store's backend name
 * @param consecutiveFailures failed store attempts in a row
 * @param storeUnreachable whether the store has not answered for longer than the renew
 * deadline
 * @param conflict why this instance does not compete, if it does not
 * @param sinceStoreAnswered time since the store last answered this group's election, if
 * known: how old the view shown is
 * @param phase where the election stands, if the registry is the library's engine
 */
record GroupState(LeaderElection election, boolean leading, Optional<LeaderInfo> leader,
		Optional<Duration> leaseRemaining, String backend, int consecutiveFailures, boolean storeUnreachable,
		Optional<String> conflict, Optional<Duration> sinceStoreAnswered, Optional<GroupPhase> phase) {

	/** Shown as the backend of a registry that is not the library's engine. */
	static final String UNKNOWN_BACKEND = "unknown";

	static GroupState of(LeaderElection election, LeaderElectionRegistry registry) {
		if (registry instanceof LeaderElectionEngine engine) {
			Optional<ElectionStatus> status = engine.status(election.group());
			if (status.isPresent()) {
				ElectionStatus current = status.get();
				return new GroupState(election, current.leader(), current.currentLeader(), current.beliefRemaining(),
						current.backend(), current.consecutiveFailures(), engine.isStoreUnreachable(election.group()),
						current.conflict(), current.sinceStoreAnswered(), Optional.of(current.phase()));
			}
		}
		// A registry of the application's own: only what the API tells.
		return new GroupState(election, election.isLeader(), election.currentLeader(), Optional.empty(),
				UNKNOWN_BACKEND, 0, false, Optional.empty(), Optional.empty(), Optional.empty());
	}

	String group() {
		return this.election.group();
	}

	String role() {
		return this.leading ? "LEADER" : "FOLLOWER";
	}

	/**
	 * The phase as the endpoint shows it, such as {@code staying-out}; null if unknown.
	 */
	@Nullable String phaseName() {
		return this.phase.map((known) -> known.name().toLowerCase(Locale.ROOT).replace('_', '-')).orElse(null);
	}

	/** A duration as ISO-8601 with millisecond precision, such as {@code PT9.87S}. */
	static String format(Duration duration) {
		return Duration.ofMillis(duration.toMillis()).toString();
	}

}
