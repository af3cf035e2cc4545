package io.github.leaderelection.chaos;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntConsumer;

import io.github.leaderelection.testing.ChildJvm;

/**
 * One incarnation of a node: a {@link ChaosNode} JVM started by the harness. A node that
 * is killed and started again is a new incarnation with a new key
 * ({@code n<index>.<incarnation>}), a new candidate id and a new log.
 */
final class NodeProcess {

	private final int index;

	private final String key;

	private final ChildJvm jvm;

	/**
	 * By group, the term this node announced it leads in; absent after it announced a
	 * revocation of that term.
	 */
	private final Map<String, Long> announcedTerms = new ConcurrentHashMap<>();

	/** {@link System#nanoTime()} when it last announced that it leads a group. */
	private volatile long announcedLeaderAt = System.nanoTime();

	private volatile boolean stopped;

	private volatile boolean exitExpected;

	private volatile boolean ready;

	private NodeProcess(int index, String key, List<String> command, Map<String, String> environment, Path errorFile)
			throws IOException {
		this.index = index;
		this.key = key;
		this.jvm = ChildJvm.start("node-" + key, command, environment, errorFile, this::readAnnouncement);
	}

	static NodeProcess start(int index, String key, List<String> command, Map<String, String> environment,
			Path errorFile) throws IOException {
		return new NodeProcess(index, key, command, environment, errorFile);
	}

	int index() {
		return this.index;
	}

	String key() {
		return this.key;
	}

	long pid() {
		return this.jvm.pid();
	}

	boolean isAlive() {
		return this.jvm.isAlive();
	}

	/**
	 * The term it announced it leads the group in, if it has announced no revocation
	 * since and is not paused.
	 */
	Optional<Long> announcedTerm(String group) {
		return (this.stopped || !this.jvm.isAlive()) ? Optional.empty()
				: Optional.ofNullable(this.announcedTerms.get(group));
	}

	/**
	 * {@link System#nanoTime()} when it last announced that it leads a group, or when it
	 * started.
	 */
	long announcedLeaderAt() {
		return this.announcedLeaderAt;
	}

	/** Whether it has started its election. */
	boolean isReady() {
		return this.ready;
	}

	/**
	 * Calls back with the exit code if the process exits other than by {@link #kill} or
	 * {@link #terminate}.
	 */
	void onUnexpectedExit(IntConsumer callback) {
		this.jvm.onExit().thenAccept((exitCode) -> {
			if (!this.exitExpected) {
				callback.accept(exitCode);
			}
		});
	}

	/** {@code kill -9}, and waits until the process is gone. */
	void kill() throws InterruptedException {
		this.exitExpected = true;
		this.jvm.kill();
		this.jvm.awaitExit(Long.MAX_VALUE);
	}

	/** Sends {@code SIGTERM} without waiting; {@link #terminate} waits. */
	void signalTerminate() {
		this.exitExpected = true;
		this.jvm.terminate();
	}

	/**
	 * {@code kill -TERM}: the node closes its engine (stops leading, then releases the
	 * lease) and exits; killed if it takes longer than the timeout.
	 * @return whether it exited by itself
	 */
	boolean terminate(long timeoutMillis) throws InterruptedException {
		this.exitExpected = true;
		return this.jvm.terminate(timeoutMillis);
	}

	void pause() throws IOException, InterruptedException {
		this.jvm.signal("STOP");
		this.stopped = true;
	}

	void resume() throws IOException, InterruptedException {
		this.jvm.signal("CONT");
		this.stopped = false;
	}

	private void readAnnouncement(String line) {
		if (line == null) {
			this.announcedTerms.clear(); // the process is gone
			return;
		}
		String[] fields = line.split(" ");
		if (fields[0].equals("ready")) {
			this.ready = true;
		}
		else if (fields.length == 3 && fields[0].equals("leader")) {
			this.announcedTerms.put(fields[2], Long.parseLong(fields[1]));
			this.announcedLeaderAt = System.nanoTime();
		}
		else if (fields.length == 3 && fields[0].equals("follower")) {
			this.announcedTerms.remove(fields[2], Long.parseLong(fields[1]));
		}
	}

	@Override
	public String toString() {
		return this.key + "(pid " + this.jvm.pid() + ")";
	}

}
