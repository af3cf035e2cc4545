/**
 * A lease store in etcd v3 through jetcd: leases expire by etcd's own leases, writes are
 * transactions compared on revisions.
 */
@NullMarked
package io.github.leaderelection.etcd;

import org.jspecify.annotations.NullMarked;
