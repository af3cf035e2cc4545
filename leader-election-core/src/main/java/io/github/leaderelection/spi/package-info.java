/**
 * The contract a store backend implements
 * ({@link io.github.leaderelection.spi.LeaseStore}: a record per group with a holder, a
 * term and a lease the store expires by its own clock), and the support every store
 * shares: the terms seen ({@link io.github.leaderelection.spi.SeenTerms}), a call within
 * its timeout ({@link io.github.leaderelection.spi.StoreCall}), the check of configured
 * names ({@link io.github.leaderelection.spi.StoreNames}), the callbacks of watches
 * ({@link io.github.leaderelection.spi.WatcherRegistry}) and a lock per key
 * ({@link io.github.leaderelection.spi.KeyedLocks}).
 */
@NullMarked
package io.github.leaderelection.spi;

import org.jspecify.annotations.NullMarked;
