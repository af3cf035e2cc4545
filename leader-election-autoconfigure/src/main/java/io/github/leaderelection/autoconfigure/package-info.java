/**
 * Auto-configuration for leader election: the engine, its store, events, the
 * {@link io.github.leaderelection.OnlyOnLeader @OnlyOnLeader} guard and their lifecycle.
 */
@NullMarked
package io.github.leaderelection.autoconfigure;

import org.jspecify.annotations.NullMarked;
