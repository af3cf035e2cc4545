/**
 * Micrometer metrics of the elections: who leads, terms, transitions and the timing of
 * every store request.
 */
@NullMarked
package io.github.leaderelection.metrics;

import org.jspecify.annotations.NullMarked;
