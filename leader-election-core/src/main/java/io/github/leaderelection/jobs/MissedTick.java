package io.github.leaderelection.jobs;

import java.time.Instant;
import java.util.Objects;

/**
 * The ticks of a job that passed unrun since its last recorded run, as a new leader finds
 * them, and what its policy says to do.
 *
 * @param first the first tick missed
 * @param newest the newest tick missed, the one a catch-up run claims
 * @param run whether to run the job once now, for all of them; false when the policy
 * skips them or the newest is older than its maximum age
 */
public record MissedTick(Instant first, Instant newest, boolean run) {

	public MissedTick {
		Objects.requireNonNull(first, "first");
		Objects.requireNonNull(newest, "newest");
	}

}
