package io.github.leaderelection.etcd;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
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

	boolean isHeldBy(Lease lease) {
		return lease.term() == this.term && Objects.equals(lease.holder(), this.holder)
				&& Objects.equals(this.holder, this.leaseHolder);
	}

	ByteSequence encode() {
		return EtcdLeaseStore.bytes(this.term + " " + this.leaseId + " " + this.fenceId + " " + name(this.leaseHolder)
				+ " " + name(this.holder));
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
