/**
 * Leader-only jobs whose runs are recorded in the election's store: each tick claimed
 * once, fenced by the group's term, and the ticks that passed while nobody led caught up
 * by the next leader. Without Spring: the scheduling integration and the fault-injection
 * harness both run jobs through {@link io.github.leaderelection.jobs.LeaderOnlyJob}.
 */
@NullMarked
package io.github.leaderelection.jobs;

import org.jspecify.annotations.NullMarked;
