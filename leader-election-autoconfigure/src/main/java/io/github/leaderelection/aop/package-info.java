/**
 * The {@link io.github.leaderelection.OnlyOnLeader @OnlyOnLeader} guard: an advisor that
 * runs annotated methods only on the leader, and waits for them on shutdown.
 */
@NullMarked
package io.github.leaderelection.aop;

import org.jspecify.annotations.NullMarked;
