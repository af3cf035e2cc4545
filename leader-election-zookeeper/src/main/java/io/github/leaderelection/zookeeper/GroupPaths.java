package io.github.leaderelection.zookeeper;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Where a store's groups live: {@code <basePath>/<group, percent-encoded>} for a group,
 * its queue nodes below it; the live candidates, below
 * {@code <basePath>/}{@value #CANDIDATES}; and the run records, below
 * {@code <basePath>/}{@value #RUNS}{@code /<group>/<job>}, both percent-encoded.
 */
final class GroupPaths {

	/**
	 * The node under which the live candidates are listed: a name that no group encodes
	 * to ({@link #encode} never leaves a '.'), so that a group named "candidates" keeps a
	 * node of its own.
	 */
	static final String CANDIDATES = ".candidates";

	/** The node under which the run records are: like {@link #CANDIDATES}, no group's. */
	static final String RUNS = ".runs";

	/** Candidate nodes end with ZooKeeper's ten-digit sequence number. */
	private static final Pattern QUEUE_NODE = Pattern.compile(".*-lease-\\d{10}");

	private final String basePath;

	GroupPaths(String basePath) {
		this.basePath = basePath;
	}

	/** The node under which the groups live. */
	String base() {
		return this.basePath;
	}

	String group(String group) {
		return this.basePath + "/" + encode(group);
	}

	String node(String group, String node) {
		return group(group) + "/" + node;
	}

	/** The parent of the live candidates' nodes. */
	String candidates() {
		return this.basePath + "/" + CANDIDATES;
	}

	String candidate(String node) {
		return candidates() + "/" + node;
	}

	/** The parent of the run records of a group's jobs. */
	String runs(String group) {
		return this.basePath + "/" + RUNS + "/" + encode(group);
	}

	/** The node of a job's run record in a group. */
	String run(String group, String job) {
		return runs(group) + "/" + encode(job);
	}

	/** Whether a child of a group node is a candidate's queue node. */
	static boolean isQueueNode(String name) {
		return QUEUE_NODE.matcher(name).matches();
	}

	/**
	 * Group names may hold any character: keep letters, digits, '_' and '-',
	 * percent-encode the rest.
	 */
	static String encode(String group) {
		StringBuilder segment = new StringBuilder();
		for (byte b : group.getBytes(StandardCharsets.UTF_8)) {
			char c = (char) (b & 0xff);
			if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-') {
				segment.append(c);
			}
			else {
				segment.append('%')
					.append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
					.append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
			}
		}
		return segment.toString();
	}

	/**
	 * The name that {@link #encode} turned into this segment, or null when no name
	 * encodes to it (a node that this store did not name).
	 */
	static @Nullable String decode(String segment) {
		ByteBuffer bytes = ByteBuffer.allocate(segment.length());
		for (int i = 0; i < segment.length(); i++) {
			char c = segment.charAt(i);
			if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-') {
				bytes.put((byte) c);
			}
			else if (c == '%' && i + 2 < segment.length() && isUpperHex(segment.charAt(i + 1))
					&& isUpperHex(segment.charAt(i + 2))) {
				bytes.put((byte) Integer.parseInt(segment.substring(i + 1, i + 3), 16));
				i += 2;
			}
			else {
				return null;
			}
		}
		try {
			String name = StandardCharsets.UTF_8.newDecoder().decode(bytes.flip()).toString();
			// Only the form that encode gives: a lenient decoder would read "%41" as "A",
			// which is the name of another node.
			return encode(name).equals(segment) ? name : null;
		}
		catch (CharacterCodingException ex) {
			return null;
		}
	}

	private static boolean isUpperHex(char c) {
		return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F');
	}

}
