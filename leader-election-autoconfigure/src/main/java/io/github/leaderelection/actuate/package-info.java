/**
 * Actuator support: the {@code leaderElection} health indicator and the
 * {@code leaderelection} endpoint, which show every group this instance takes part in and
 * let an operator move leadership.
 */
@NullMarked
package io.github.leaderelection.actuate;

import org.jspecify.annotations.NullMarked;
