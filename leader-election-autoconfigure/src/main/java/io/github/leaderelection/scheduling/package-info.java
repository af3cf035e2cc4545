/**
 * Scheduled leader-only methods run at most once per tick across the instances, with the
 * ticks missed while nobody led caught up: the scheduler's tasks of
 * {@link io.github.leaderelection.OnlyOnLeader @OnlyOnLeader} {@code @Scheduled} methods
 * claim each tick in the election's store before they run.
 */
@NullMarked
package io.github.leaderelection.scheduling;

import org.jspecify.annotations.NullMarked;
