/**
 * A lease store on ZooKeeper through Apache Curator: candidates queue as ephemeral
 * sequential nodes, and a lease lasts as long as its holder's session.
 */
@NullMarked
package io.github.leaderelection.zookeeper;

import org.jspecify.annotations.NullMarked;
