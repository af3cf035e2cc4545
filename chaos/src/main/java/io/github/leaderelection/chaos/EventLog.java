package io.github.leaderelection.chaos;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

/**
 * A record of events, one line per event, each stamped with {@link System#nanoTime()}
 * (one system-wide monotonic clock on one host, so the records of several processes
 * compare directly).
 *
 * <p>
 * Each line is written with one unbuffered {@code write} call, so it is in the kernel
 * before the writer goes on: a {@code kill -9} right after loses nothing that the process
 * acted upon.
 *
 * <p>
 * A node's lines ({@code t}: a nanoTime reading). Every line about one group's election
 * ends with that group ({@code <g>}), so that the checker judges each group on its own; a
 * run with one group names the group {@code chaos}: <pre>
 * node &lt;t&gt; &lt;key&gt; &lt;pid&gt; &lt;candidateId&gt; &lt;library|flag&gt; &lt;on|off (fencing)&gt; &lt;renewDeadlineNanos&gt;
 * acquire &lt;tEntry&gt; &lt;tExit&gt; &lt;taken|empty|error&gt; &lt;term&gt; &lt;activeInNanos&gt; &lt;g&gt;
 * renew-start &lt;tEntry&gt; &lt;term&gt; &lt;g&gt;       (a batch renewal: one line per lease, one tEntry)
 * renew-end &lt;tEntry&gt; &lt;tExit&gt; &lt;term&gt; &lt;true|false|error&gt; &lt;g&gt;
 * release &lt;t&gt; &lt;term&gt; &lt;g&gt;                 (t read before the release call)
 * release-end &lt;t&gt; &lt;term&gt; &lt;g&gt;             (the release call returned)
 * granted &lt;t&gt; &lt;term&gt; &lt;g&gt;                 (t read before the node's flag is set)
 * revoked &lt;t&gt; &lt;term&gt; &lt;reason&gt; &lt;g&gt;        (t read after the node's flag is cleared)
 * probe &lt;p0&gt; &lt;p1&gt; &lt;t0&gt; &lt;t1&gt; &lt;fromTerm&gt; &lt;toTerm&gt; &lt;g&gt;
 * action &lt;c0&gt; &lt;c1&gt; &lt;term&gt; &lt;w0&gt; &lt;w1&gt; &lt;accepted|refused|error&gt; &lt;g&gt;
 * rogue &lt;w0&gt; &lt;w1&gt; &lt;term&gt; &lt;accepted|refused|error&gt; &lt;g&gt;
 * job-start &lt;t&gt; &lt;tick&gt; &lt;first&gt; &lt;term&gt; &lt;plain|catch-up&gt; &lt;g&gt;   (before a claim of the job, see JobTicker)
 * job &lt;t0&gt; &lt;t1&gt; &lt;tick&gt; &lt;first&gt; &lt;term&gt; &lt;plain|catch-up&gt; &lt;run|refused|error&gt; &lt;g&gt;
 * job-missed &lt;t&gt; &lt;first|-&gt; &lt;newest|-&gt; &lt;found|none|error&gt; &lt;g&gt;
 * job-clock &lt;t&gt; &lt;lastTick&gt; &lt;currentTick&gt; &lt;g&gt;     (the ticker saw its wall clock jump)
 * ready &lt;t&gt;
 * clock &lt;t&gt; &lt;wallMillis&gt;
 * stall &lt;tFrom&gt; &lt;tTo&gt;                (the probe did not run in between, see ChaosNode)
 * rate &lt;t&gt; &lt;rate&gt;                   (its election clock runs at this rate from t on)
 * exit &lt;t&gt;
 * </pre> A probe line says that the sample of {@code leadership()} of group g read
 * between p0 and p1 saw {@code fromTerm} (0: none) and the next one, read between t0 and
 * t1, saw {@code toTerm}. An action line says that the check that allowed the write ran
 * between c0 and c1, and the write between w0 and w1. A job line's ticks are epoch
 * milliseconds of the node's wall clock; {@code first} is the tick itself for a plain
 * run, the first tick missed for a catch-up.
 *
 * <p>
 * The harness's lines: <pre>
 * run &lt;t&gt; &lt;wallMillis&gt; &lt;name&gt; &lt;backend&gt; &lt;seed&gt; &lt;library|flag&gt; &lt;on|off&gt; &lt;leaseNanos&gt; &lt;renewNanos&gt; &lt;retryNanos&gt; &lt;groups&gt; &lt;balanced|unbalanced&gt;
 * spawn &lt;t&gt; &lt;key&gt; &lt;pid&gt;
 * death &lt;tBefore&gt; &lt;tGone&gt; &lt;key&gt; &lt;kill|term|end|unexpected&gt;
 * fault &lt;type&gt; &lt;tStart&gt; &lt;tEnd&gt; &lt;target&gt; &lt;detail&gt;
 * skipped &lt;t&gt; &lt;type&gt; &lt;why&gt;
 * end &lt;t&gt;
 * write &lt;id&gt; &lt;key&gt; &lt;term&gt; &lt;g&gt;       (accepted writes, read from the table after the run)
 * </pre>
 */
final class EventLog implements AutoCloseable {

	private final FileOutputStream out;

	/**
	 * The records about one group's election, which end with that group, and the number
	 * of their fields, the group included.
	 */
	private static final Map<String, Integer> GROUP_RECORD_FIELDS = Map.ofEntries(Map.entry("acquire", 7),
			Map.entry("renew-start", 4), Map.entry("renew-end", 6), Map.entry("release", 4),
			Map.entry("release-end", 4), Map.entry("granted", 4), Map.entry("revoked", 5), Map.entry("probe", 8),
			Map.entry("action", 8), Map.entry("rogue", 6), Map.entry("write", 5), Map.entry("job-start", 7),
			Map.entry("job", 9), Map.entry("job-missed", 6), Map.entry("job-clock", 5));

	/** Whether records of this type are about one group's election, and end with it. */
	static boolean isAboutAGroup(String type) {
		return GROUP_RECORD_FIELDS.containsKey(type);
	}

	/**
	 * The group a record is about, or null for a record about the whole process or run.
	 * @throws IllegalArgumentException if a group's record does not name its group (a
	 * record of the format before groups)
	 */
	static String groupOf(String[] fields) {
		Integer expected = GROUP_RECORD_FIELDS.get(fields[0]);
		if (expected == null) {
			return null;
		}
		if (fields.length != expected) {
			throw new IllegalArgumentException("A '" + fields[0] + "' record has " + expected
					+ " fields, the group last, but this one has " + fields.length + ": " + String.join(" ", fields));
		}
		return fields[fields.length - 1];
	}

	EventLog(Path file) {
		try {
			this.out = new FileOutputStream(file.toFile(), true);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	static long now() {
		return System.nanoTime();
	}

	void write(Object... fields) {
		StringBuilder line = new StringBuilder(96);
		for (Object field : fields) {
			if (line.length() > 0) {
				line.append(' ');
			}
			line.append(field);
		}
		line.append('\n');
		byte[] bytes = line.toString().getBytes(StandardCharsets.UTF_8);
		synchronized (this) {
			try {
				this.out.write(bytes);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
	}

	@Override
	public synchronized void close() {
		try {
			this.out.close();
		}
		catch (IOException ex) {
			// Exiting anyway.
		}
	}

}
