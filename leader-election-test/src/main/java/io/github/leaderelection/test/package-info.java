/**
 * Test support for applications: makes this instance the leader or a follower of a group,
 * at once and deterministically, in a {@code @SpringBootTest} that elects through the
 * in-memory backend.
 */
@NullMarked
package io.github.leaderelection.test;

import org.jspecify.annotations.NullMarked;
