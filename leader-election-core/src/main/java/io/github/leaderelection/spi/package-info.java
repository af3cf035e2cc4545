/**
 * The contract a store backend implements
 * ({@link io.github.leaderelection.spi.LeaseStore}: a record per group with a holder, a
 * term and a lease the store expires by its own clock), and the support every store
 * shares ({@link io.github.leaderelection.spi.SeenTerms}).
 */
@NullMarked
package io.github.leaderelection.spi;

import org.jspecify.annotations.NullMarked;
