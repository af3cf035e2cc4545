package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.Optional;

import io.github.leaderelection.LeaderInfo;
import org.jspecify.annotations.Nullable;

/**
 * A snapshot of one group's election as this instance sees it, for health checks,
 * endpoints and logs. Taking one costs no I/O.
 *
 * @param group the group
 * @param candidateId this instance's candidate id
 * @param leader whether this instance leads
 * @param currentLeader the leader as last observed, if known
 * @param beliefRemaining while leading, the time left before this instance stops
 * believing unless it renews
 * @param sinceStoreAnswered time since the store last answered an attempt, or empty if it
 * never has
 * @param consecutiveFailures failed attempts in a row; zero while the store answers
 * @param backend the store's backend name
 * @param conflict why this instance does not compete for the group, such as another live
 * process with the same candidate id; empty while it competes
 * @param phase where the group's election stands on this instance
 */
public record ElectionStatus(String group, String candidateId, boolean leader, Optional<LeaderInfo> currentLeader,
		Optional<Duration> beliefRemaining, Optional<Duration> sinceStoreAnswered, int consecutiveFailures,
		String backend, Optional<String> conflict, GroupPhase phase) {

	/**
	 * Whether the election cannot work from here: the store has not answered for longer
	 * than the given renew deadline (measured from the start of the election when it
	 * never answered).
	 */
	public boolean isStoreUnreachable(Duration renewDeadline, @Nullable Duration sinceStarted) {
		Optional<Duration> silence = this.sinceStoreAnswered.or(() -> Optional.ofNullable(sinceStarted));
		return this.consecutiveFailures > 0
				&& silence.filter((duration) -> duration.compareTo(renewDeadline) > 0).isPresent();
	}

}
