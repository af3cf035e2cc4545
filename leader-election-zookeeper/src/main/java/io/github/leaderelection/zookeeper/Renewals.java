package io.github.leaderelection.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.leaderelection.spi.Lease;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;

/**
 * Renews several of a store's leases with one multi-operation. For each lease it holds
 * the two operations of a single renewal: a check that the holder's queue node still
 * exists, and a check of the version of the group node (or a write of the grant, when the
 * lease duration or the wait for an earlier holder changed).
 *
 * <p>
 * A multi-operation is all or nothing: one lease that is no longer held fails the whole
 * request, and the answer names only the first operation that failed (those before it
 * passed, those after it were not judged). That lease is lost; the leases after it are
 * read, in one request, and those whose group or node changed are lost too, as their
 * checks would have failed; the others are sent again. So a few lost leases cost two
 * requests more, not one per lease, and a lease counts as renewed only when a committed
 * multi-operation held its checks.
 *
 * <p>
 * A batch holds the locks of its members from its checks until its answer, as a single
 * renewal holds its member's, so that renewals, grants and releases of one member never
 * interleave.
 */
final class Renewals {

	/**
	 * The most renewals in one request: a batch takes its members' locks by recursion,
	 * four a stack frame (see {@link QueueMember#locked}).
	 */
	private static final int MAX_BATCH = 4000;

	private final CuratorCalls zookeeper;

	private final GroupPaths paths;

	Renewals(CuratorCalls zookeeper, GroupPaths paths) {
		this.zookeeper = zookeeper;
		this.paths = paths;
	}

	/**
	 * Renews the members' leases: each member that still holds its lease's term on a node
	 * of the current session is renewed, in batches of half a packet at most (one batch
	 * for about 1,500 leases of groups with short names).
	 * @param leases the lease asked for, by member
	 * @return the leases as renewed, by group
	 */
	Map<String, Lease> renew(Map<QueueMember, Lease> leases, Duration leaseDuration, long deadline) throws Exception {
		long leaseMillis = leaseDuration.toMillis();
		Map<String, Lease> renewed = new HashMap<>();
		List<QueueMember> batch = new ArrayList<>();
		int bytes = 0;
		int budget = leases.isEmpty() ? 0 : this.zookeeper.batchBytes();
		for (QueueMember member : leases.keySet().stream().sorted(QueueMember.LOCK_ORDER).toList()) {
			int size = bytes(member);
			if (!batch.isEmpty() && (batch.size() == MAX_BATCH || bytes + size > budget)) {
				renewed.putAll(renewLocked(batch, leases, leaseDuration, deadline));
				batch = new ArrayList<>();
				bytes = 0;
			}
			batch.add(member);
			bytes += size;
		}
		if (!batch.isEmpty()) {
			renewed.putAll(renewLocked(batch, leases, leaseDuration, deadline));
		}
		return renewed;
	}

	/**
	 * More than the bytes a member's renewal adds to a request (two operations, their
	 * paths and the grant; about 190 plus twice the group path and the candidate id), and
	 * to the answer of the read that judges it after a failure (about 250 plus twice the
	 * candidate id): a batch sized by it fits in a packet both ways.
	 */
	private int bytes(QueueMember member) {
		return 256 + 2 * this.paths.group(member.group).length() + 3 * member.candidateId.length();
	}

	private Map<String, Lease> renewLocked(List<QueueMember> batch, Map<QueueMember, Lease> leases,
			Duration leaseDuration, long deadline) throws Exception {
		return QueueMember.locked(batch, () -> {
			long session = this.zookeeper.client().getZookeeperClient().getZooKeeper().getSessionId();
			List<Renewal> renewals = new ArrayList<>();
			for (QueueMember member : batch) {
				String node = member.node;
				Lease lease = leases.get(member);
				if (member.term == lease.term() && node != null && member.session == session) {
					renewals.add(new Renewal(member, lease, node, leaseDuration.toMillis()));
				}
			}
			Map<String, Lease> renewed = new HashMap<>();
			for (Renewal renewal : commit(renewals, deadline)) {
				renewed.put(renewal.member().group, renewal.renewed(leaseDuration));
			}
			return renewed;
		});
	}

	/**
	 * Sends the renewals in one multi-operation, and again without those found lost,
	 * until one is committed or none is left.
	 * @return the renewals committed
	 */
	private List<Renewal> commit(List<Renewal> renewals, long deadline) throws Exception {
		List<Renewal> pending = renewals;
		while (!pending.isEmpty()) {
			List<CuratorOp> operations = new ArrayList<>();
			for (Renewal renewal : pending) {
				operations.add(this.zookeeper.check(this.paths.node(renewal.member().group, renewal.node())));
				operations.add(renewal.operation(this.zookeeper, this.paths));
			}
			CuratorEvent result = this.zookeeper.transaction(deadline, operations.toArray(CuratorOp[]::new));
			List<CuratorTransactionResult> results = result.getOpResults();
			if (results == null) {
				throw KeeperException.create(Code.get(result.getResultCode()));
			}
			if (CuratorCalls.isOk(result)) {
				List<Renewal> committed = new ArrayList<>();
				for (int i = 0; i < pending.size(); i++) {
					committed.add(pending.get(i).committed(results.get(2 * i + 1)));
				}
				return committed;
			}
			int failed = 0;
			while (failed < results.size() && results.get(failed).getError() == Code.OK.intValue()) {
				failed++;
			}
			if (failed == results.size()) {
				throw KeeperException.create(Code.get(result.getResultCode()));
			}
			failed /= 2;
			pending.get(failed).member().term = 0;
			List<Renewal> next = new ArrayList<>(pending.subList(0, failed));
			next.addAll(stillHeld(pending.subList(failed + 1, pending.size()), deadline));
			pending = next;
		}
		return List.of();
	}

	/**
	 * Reads the group and the queue node of each renewal that a failed request left
	 * unjudged. A session reads its own writes, so a group version other than the lease's
	 * (this member's grant or its last renewal that wrote) means somebody else wrote (a
	 * force, a clear, a grant, a release through another store): that lease is lost, as
	 * is one whose node is gone. A lagging server may still show the old state; the next
	 * request then fails on it.
	 * @return the renewals still worth sending
	 */
	private List<Renewal> stillHeld(List<Renewal> renewals, long deadline) throws Exception {
		if (renewals.isEmpty()) {
			return List.of();
		}
		List<Op> reads = new ArrayList<>();
		for (Renewal renewal : renewals) {
			reads.add(this.zookeeper.readData(this.paths.group(renewal.member().group)));
			reads.add(this.zookeeper.readData(this.paths.node(renewal.member().group, renewal.node())));
		}
		// One request: the batch was sized so that these answers fit in one packet.
		List<OpResult> results = this.zookeeper.read(reads, reads.size(), deadline);
		List<Renewal> held = new ArrayList<>();
		for (int i = 0; i < renewals.size(); i++) {
			Renewal renewal = renewals.get(i);
			if (results.get(2 * i) instanceof OpResult.GetDataResult group
					&& group.getStat().getVersion() == renewal.version()
					&& results.get(2 * i + 1) instanceof OpResult.GetDataResult) {
				held.add(renewal);
			}
			else {
				renewal.member().term = 0;
			}
		}
		return held;
	}

	/**
	 * One lease's renewal, prepared under its member's lock once the member was found to
	 * hold the lease in the current session.
	 *
	 * @param member the holder
	 * @param lease the lease to renew
	 * @param version the group node's version the renewal checks or writes on
	 * @param node its queue node
	 * @param leaseMillis the lease duration asked for
	 * @param quietMillis the wait for an earlier holder still to record: none once it is
	 * over
	 */
	record Renewal(QueueMember member, Lease lease, int version, String node, long leaseMillis, long quietMillis) {

		Renewal(QueueMember member, Lease lease, String node, long leaseMillis) {
			this(member, lease, ZookeeperLeaseStore.version(lease), node, leaseMillis,
					member.isActive() ? 0 : member.quietMillis);
		}

		boolean changed() {
			return this.leaseMillis != this.member.leaseMillis || this.quietMillis != this.member.quietMillis;
		}

		/**
		 * Checks only, unless something changed: still a write, committed by the
		 * ZooKeeper leader, so that no lagging server can confirm a lease it does not
		 * know was lost.
		 */
		CuratorOp operation(CuratorCalls zookeeper, GroupPaths paths) throws Exception {
			String group = paths.group(this.member.group);
			return changed()
					? zookeeper
						.setData(group, this.version,
								new Grant(this.member.term, this.member.candidateId, this.node, this.member.session,
										this.leaseMillis, this.quietMillis)
									.bytes())
					: zookeeper.check(group, this.version);
		}

		/**
		 * This renewal once committed: one that wrote left the group node at a new
		 * version.
		 */
		Renewal committed(CuratorTransactionResult result) {
			if (!changed()) {
				return this;
			}
			this.member.leaseMillis = this.leaseMillis;
			this.member.quietMillis = this.quietMillis;
			return new Renewal(this.member, this.lease, result.getResultStat().getVersion(), this.node,
					this.leaseMillis, this.quietMillis);
		}

		/** The lease as this renewal hands it out. */
		Lease renewed(Duration leaseDuration) {
			return this.lease.renewedFor(leaseDuration).withVersion(this.version);
		}

	}

}
