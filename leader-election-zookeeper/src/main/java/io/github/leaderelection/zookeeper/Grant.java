package io.github.leaderelection.zookeeper;

import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

/**
 * What a group node holds: the last grant (its term, the holder and the holder's queue
 * node, the holder's lease duration) and, after a forced change, how long the next holder
 * must wait. Stored as text lines (format version, term, lease and quiet milliseconds,
 * node, holder), the holder last so that it may hold any character; {@code zkCli.sh get}
 * shows who leads.
 *
 * @param term the term of the last grant, or 0 before the first
 * @param holder the candidate named, or null after a release or a forced re-election
 * @param node the name of the holder's queue node
 * @param leaseMillis the holder's lease duration
 * @param quietMillis how long the next holder waits before it acts, after a forced change
 */
record Grant(long term, @Nullable String holder, @Nullable String node, long leaseMillis, long quietMillis) {

	static Grant parse(byte @Nullable [] data) {
		if (data == null || data.length == 0) {
			return new Grant(0, null, null, 0, 0);
		}
		String[] fields = new String(data, StandardCharsets.UTF_8).split("\n", 6);
		return new Grant(Long.parseLong(fields[1]), (fields.length > 5) ? fields[5] : null,
				fields[4].isEmpty() ? null : fields[4], Long.parseLong(fields[2]), Long.parseLong(fields[3]));
	}

	byte[] bytes() {
		return ("1\n" + this.term + "\n" + this.leaseMillis + "\n" + this.quietMillis + "\n"
				+ ((this.node != null) ? this.node : "") + ((this.holder != null) ? "\n" + this.holder : ""))
			.getBytes(StandardCharsets.UTF_8);
	}

}
