/**
 * Lifecycle beans bound to leadership: started when this instance becomes leader of a
 * group and stopped when it stops leading.
 */
@NullMarked
package io.github.leaderelection.lifecycle;

import org.jspecify.annotations.NullMarked;
