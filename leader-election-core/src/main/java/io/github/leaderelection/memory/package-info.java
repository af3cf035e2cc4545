/**
 * A lease store in this JVM's memory, for tests and single-process runs.
 */
@NullMarked
package io.github.leaderelection.memory;

import org.jspecify.annotations.NullMarked;
