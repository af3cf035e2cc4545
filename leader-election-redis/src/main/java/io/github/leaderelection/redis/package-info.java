/**
 * A lease store in Redis through Spring Data Redis and Lettuce, safe when Redis loses its
 * data.
 */
@NullMarked
package io.github.leaderelection.redis;

import org.jspecify.annotations.NullMarked;
