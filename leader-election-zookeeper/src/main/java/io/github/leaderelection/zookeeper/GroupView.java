package io.github.leaderelection.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import io.github.leaderelection.spi.Lease;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * A group as read at one instant.
 *
 * @param grant the group node's data
 * @param version the version of that data, which every write checks
 * @param createdMillis when the group node was created, by ZooKeeper's clock
 * @param modifiedMillis when the group node was last written, by ZooKeeper's clock
 * @param queue the names of the candidates' nodes, lowest sequence first
 */
record GroupView(Grant grant, int version, long createdMillis, long modifiedMillis, List<String> queue) {

	/**
	 * The view of a group node read with its stat, and of its children, of which the
	 * queue nodes are kept in sequence order.
	 */
	static GroupView of(byte @Nullable [] data, Stat stat, List<String> children) {
		List<String> queue = children.stream()
			.filter(GroupPaths::isQueueNode)
			.sorted(Comparator.comparing((name) -> name.substring(name.length() - 10)))
			.toList();
		return new GroupView(Grant.parse(data), stat.getVersion(), stat.getCtime(), stat.getMtime(), queue);
	}

	/**
	 * This view with a node queued after it was read, last: a node created later has a
	 * higher sequence number than every node read before.
	 */
	GroupView withQueued(String node) {
		List<String> queue = new ArrayList<>(this.queue);
		queue.add(node);
		return new GroupView(this.grant, this.version, this.createdMillis, this.modifiedMillis, List.copyOf(queue));
	}

	boolean isQueued(@Nullable String node) {
		return node != null && this.queue.contains(node);
	}

	/**
	 * Whether the holder's node is still there: the lease lives as long as its session.
	 */
	boolean hasLiveHolder() {
		return this.grant.holder() != null && isQueued(this.grant.node());
	}

	/**
	 * The term of the next grant: above the group node's last write by ZooKeeper's clock,
	 * in microseconds. A group node created again after ZooKeeper lost its data, or
	 * written back to an older copy (a restore, a hand edit), was written after every
	 * grant before, so its next term is above every earlier term, also for a candidate
	 * that had not seen the later ones (while grants come less than once a microsecond
	 * and ZooKeeper's clock does not step back). Never this machine's clock: one set
	 * ahead would push every later term ahead of ZooKeeper's, where no later write can
	 * catch up. The clock is a floor for terms only, never a judge of expiry.
	 */
	long nextTerm() {
		return Math.max(this.grant.term(), serverMicros()) + 1;
	}

	/** When the group node was last written, in microseconds of ZooKeeper's clock. */
	long serverMicros() {
		return Math.max(this.createdMillis, this.modifiedMillis) * 1000;
	}

	/**
	 * How long the next holder must wait after a forced change: as long as a live holder
	 * may believe.
	 */
	long quietAfterChange() {
		return Math.max(this.grant.quietMillis(), hasLiveHolder() ? this.grant.leaseMillis() : 0);
	}

	/**
	 * The lease as the SPI sees it: expiring in the holder's lease duration while its
	 * node lives, expired once it is gone.
	 */
	Lease toLease(String group) {
		boolean live = hasLiveHolder();
		Duration expiresIn = (this.grant.holder() == null) ? Duration.ofMillis(this.grant.quietMillis())
				: live ? Duration.ofMillis(this.grant.leaseMillis()) : Duration.ZERO;
		return new Lease(group, this.grant.holder(), this.grant.term(), expiresIn,
				live ? Duration.ofMillis(this.grant.quietMillis()) : Duration.ZERO);
	}

}
