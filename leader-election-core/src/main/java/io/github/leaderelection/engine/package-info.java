/**
 * The one election engine: timing, retries, beliefs and notifications for every backend.
 */
@NullMarked
package io.github.leaderelection.engine;

import org.jspecify.annotations.NullMarked;
