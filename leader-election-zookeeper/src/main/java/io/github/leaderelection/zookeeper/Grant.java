package io.github.leaderelection.zookeeper;

import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

/**
 * What a group node holds: the last grant (its term, the holder, the holder's queue node
 * and session, the holder's lease duration) and, after a forced change, how long the next
 * holder must wait. Stored as text lines (format version, term, lease and quiet
 * milliseconds, node, session in hex, holder), the holder last so that it may hold any
 * character; {@code zkCli.sh get} shows who leads.
 *
 * @param term the term of the last grant, or 0 before the first
 * @param holder the candidate named, or null after a release or a forced re-election
 * @param node the name of the holder's queue node
 * @param session the session that owned the holder's node, or 0 when not known
 * @param leaseMillis the holder's lease duration
 * @param quietMillis how long the next holder waits before it acts, after a forced change
 */
record Grant(long term, @Nullable String holder, @Nullable String node, long session, long leaseMillis,
		long quietMillis) {

	private static final String FORMAT = "2";

	/** A grant that names no holder: after a release or a forced re-election. */
	static Grant none(long term, long leaseMillis, long quietMillis) {
		return new Grant(term, null, null, 0, leaseMillis, quietMillis);
	}

	/**
	 * The grant a group node holds. The first format, without the session, is read as one
	 * whose holder's session is not known.
	 */
	static Grant parse(byte @Nullable [] data) {
		if (data == null || data.length == 0) {
			return none(0, 0, 0);
		}
		String text = new String(data, StandardCharsets.UTF_8);
		boolean withSession = text.startsWith(FORMAT + "\n");
		String[] fields = text.split("\n", withSession ? 7 : 6);
		int holder = withSession ? 6 : 5;
		long session = (withSession && !fields[5].isEmpty()) ? Long.parseUnsignedLong(fields[5], 16) : 0;
		return new Grant(Long.parseLong(fields[1]), (fields.length > holder) ? fields[holder] : null,
				fields[4].isEmpty() ? null : fields[4], session, Long.parseLong(fields[2]), Long.parseLong(fields[3]));
	}

	byte[] bytes() {
		return (FORMAT + "\n" + this.term + "\n" + this.leaseMillis + "\n" + this.quietMillis + "\n"
				+ ((this.node != null) ? this.node : "") + "\n"
				+ ((this.session != 0) ? Long.toHexString(this.session) : "")
				+ ((this.holder != null) ? "\n" + this.holder : ""))
			.getBytes(StandardCharsets.UTF_8);
	}

}
