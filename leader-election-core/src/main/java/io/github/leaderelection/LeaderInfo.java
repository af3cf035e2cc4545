package io.github.leaderelection;

import java.util.Objects;

/**
 * Who leads a group, and in which term.
 *
 * @param group the group
 * @param candidateId the leader's candidate id
 * @param term the leader's term
 */
public record LeaderInfo(String group, String candidateId, long term) {

	public LeaderInfo {
		Objects.requireNonNull(group, "group");
		Objects.requireNonNull(candidateId, "candidateId");
	}

}
