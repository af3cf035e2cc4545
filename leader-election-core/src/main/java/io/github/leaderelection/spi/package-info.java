/**
 * The contract a store backend implements: a tiny, stateless lease store.
 */
@NullMarked
package io.github.leaderelection.spi;

import org.jspecify.annotations.NullMarked;
