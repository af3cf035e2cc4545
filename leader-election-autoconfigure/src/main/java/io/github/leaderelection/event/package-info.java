/**
 * Leadership changes as Spring application events, for {@code @EventListener} methods.
 */
@NullMarked
package io.github.leaderelection.event;

import org.jspecify.annotations.NullMarked;
