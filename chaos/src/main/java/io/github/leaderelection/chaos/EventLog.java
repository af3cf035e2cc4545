package io.github.leaderelection.chaos;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

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
 * A node's lines ({@code t}: a nanoTime reading): <pre>
 * node &lt;t&gt; &lt;key&gt; &lt;pid&gt; &lt;candidateId&gt; &lt;library|flag&gt; &lt;on|off (fencing)&gt; &lt;renewDeadlineNanos&gt;
 * acquire &lt;tEntry&gt; &lt;tExit&gt; &lt;taken|empty|error&gt; &lt;term&gt; &lt;activeInNanos&gt;
 * renew-start &lt;tEntry&gt; &lt;term&gt;
 * renew-end &lt;tEntry&gt; &lt;tExit&gt; &lt;term&gt; &lt;true|false|error&gt;
 * release &lt;t&gt; &lt;term&gt;                 (t read before the release call)
 * granted &lt;t&gt; &lt;term&gt;                 (t read before the node's flag is set)
 * revoked &lt;t&gt; &lt;term&gt; &lt;reason&gt;        (t read after the node's flag is cleared)
 * probe &lt;p0&gt; &lt;p1&gt; &lt;t0&gt; &lt;t1&gt; &lt;fromTerm&gt; &lt;toTerm&gt;
 * action &lt;c0&gt; &lt;c1&gt; &lt;term&gt; &lt;w0&gt; &lt;w1&gt; &lt;accepted|refused|error&gt;
 * clock &lt;t&gt; &lt;wallMillis&gt;
 * stall &lt;tFrom&gt; &lt;tTo&gt;                (the probe did not run in between, see ChaosNode)
 * rate &lt;t&gt; &lt;rate&gt;                   (its election clock runs at this rate from t on)
 * exit &lt;t&gt;
 * </pre> A probe line says that the sample of {@code leadership()} read between p0 and p1
 * saw {@code fromTerm} (0: none) and the next one, read between t0 and t1, saw
 * {@code toTerm}. An action line says that the check that allowed the write ran between
 * c0 and c1, and the write between w0 and w1.
 *
 * <p>
 * The harness's lines: <pre>
 * run &lt;t&gt; &lt;wallMillis&gt; &lt;name&gt; &lt;backend&gt; &lt;seed&gt; &lt;library|flag&gt; &lt;on|off&gt; &lt;leaseNanos&gt; &lt;renewNanos&gt; &lt;retryNanos&gt;
 * spawn &lt;t&gt; &lt;key&gt; &lt;pid&gt;
 * death &lt;tBefore&gt; &lt;tGone&gt; &lt;key&gt; &lt;kill|term|end|unexpected&gt;
 * fault &lt;type&gt; &lt;tStart&gt; &lt;tEnd&gt; &lt;target&gt; &lt;detail&gt;
 * skipped &lt;t&gt; &lt;type&gt; &lt;why&gt;
 * end &lt;t&gt;
 * write &lt;id&gt; &lt;key&gt; &lt;term&gt;         (accepted writes, read from the table after the run)
 * </pre>
 */
final class EventLog implements AutoCloseable {

	private final FileOutputStream out;

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
