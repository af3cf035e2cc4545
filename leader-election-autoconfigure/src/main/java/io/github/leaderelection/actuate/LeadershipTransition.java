package io.github.leaderelection.actuate;

import org.jspecify.annotations.Nullable;

/**
 * One leadership transition of a group, as this instance saw it.
 *
 * @param time when this instance saw it (ISO-8601, UTC, by this instance's clock)
 * @param type {@code granted}, {@code revoked} (this instance), {@code leader-changed}
 * (the leader this instance observes) or {@code operator-action} (asked through the
 * endpoint of this instance)
 * @param term the term granted, revoked or observed; {@code null} when the group has no
 * known leader
 * @param reason for {@code revoked}, the {@code RevocationReason}; for
 * {@code operator-action}, the action and whether it was {@code asked} or {@code limited}
 * (refused, too many)
 * @param leader the leader seen: this instance for {@code granted}, the observed one for
 * {@code leader-changed}, the candidate named by a {@code force-leader} action,
 * {@code null} when none
 */
public record LeadershipTransition(String time, String type, @Nullable Long term, @Nullable String reason,
		@Nullable String leader) {

}
