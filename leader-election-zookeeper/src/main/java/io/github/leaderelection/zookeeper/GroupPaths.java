package io.github.leaderelection.zookeeper;

import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * Where a store's groups live: {@code <basePath>/<group, percent-encoded>} for a group,
 * its queue nodes below it.
 */
final class GroupPaths {

	/** Candidate nodes end with ZooKeeper's ten-digit sequence number. */
	private static final Pattern QUEUE_NODE = Pattern.compile(".*-lease-\\d{10}");

	private final String basePath;

	GroupPaths(String basePath) {
		this.basePath = basePath;
	}

	String group(String group) {
		return this.basePath + "/" + encode(group);
	}

	String node(String group, String node) {
		return group(group) + "/" + node;
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

}
