package io.github.leaderelection.etcd;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.spi.Lease;
import org.jspecify.annotations.Nullable;

/**
 * A group's record as stored: {@code term leaseId fenceId leaseHolder holder}, names
 * URL-encoded, {@code ~} for nobody.
 *
 * @param modRevision the revision of its last change, 0 for one not read from etcd
 */
record GroupRecord(long term, long leaseId, long fenceId, @Nullable String leaseHolder, @Nullable String holder,
		long modRevision) {

	/** A field of the record that names nobody. */
	private static final String NOBODY = "~";

	/**
	 * Whether the record has the lease's holder and term, with the holder's own etcd
	 * lease. A record that names nobody is held by nobody, not even by a lease naming
	 * nobody: renewing that would give the group a live lease without a holder.
	 */
	boolean isHeldBy(Lease lease) {
		return this.holder != null && lease.term() == this.term && this.holder.equals(lease.holder())
				&& this.holder.equals(this.leaseHolder);
	}

	ByteSequence encode() {
		return EtcdLeaseStore.bytes(this.term + " " + this.leaseId + " " + this.fenceId + " " + name(this.leaseHolder)
				+ " " + name(this.holder));
	}

	/** The record that a read of a group's record key found, if any. */
	static Optional<GroupRecord> in(GetResponse response) {
		return response.getKvs().stream().findFirst().map(GroupRecord::decode);
	}

	static GroupRecord decode(KeyValue keyValue) {
		String[] fields = keyValue.getValue().toString(StandardCharsets.UTF_8).split(" ");
		if (fields.length != 5) {
			throw new LeaderElectionException("Unreadable lease record in etcd at "
					+ keyValue.getKey().toString(StandardCharsets.UTF_8) + ": it was not written by this store");
		}
		return new GroupRecord(Long.parseLong(fields[0]), Long.parseLong(fields[1]), Long.parseLong(fields[2]),
				person(fields[3]), person(fields[4]), keyValue.getModRevision());
	}

	private static String name(@Nullable String candidate) {
		return (candidate != null) ? EtcdLeaseStore.encode(candidate) : NOBODY;
	}

	private static @Nullable String person(String field) {
		return NOBODY.equals(field) ? null : URLDecoder.decode(field, StandardCharsets.UTF_8);
	}

}
