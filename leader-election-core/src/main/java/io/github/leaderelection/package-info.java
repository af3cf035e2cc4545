/**
 * Leader election for Spring applications: the API an application uses.
 */
@NullMarked
package io.github.leaderelection;

import org.jspecify.annotations.NullMarked;
