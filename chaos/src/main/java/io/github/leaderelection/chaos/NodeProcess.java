package io.github.leaderelection.chaos;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * One incarnation of a node: a {@link ChaosNode} JVM started by the harness. A node that
 * is killed and started again is a new incarnation with a new key
 * ({@code n<index>.<incarnation>}), a new candidate id and a new log.
 */
final class NodeProcess {

	private final int index;

	private final String key;

	private final Process process;

	/** The term this node announced it leads in; 0 after it announced a revocation. */
	private volatile long announcedTerm;

	private volatile boolean stopped;

	private volatile boolean exitExpected;

	private volatile boolean ready;

	private NodeProcess(int index, String key, Process process) {
		this.index = index;
		this.key = key;
		this.process = process;
		Thread reader = new Thread(this::readAnnouncements, "node-" + key + "-stdout");
		reader.setDaemon(true);
		reader.start();
	}

	static NodeProcess start(int index, String key, List<String> command, Map<String, String> environment,
			Path errorFile) throws IOException {
		ProcessBuilder builder = new ProcessBuilder(command).redirectError(errorFile.toFile());
		builder.environment().putAll(environment);
		return new NodeProcess(index, key, builder.start());
	}

	int index() {
		return this.index;
	}

	String key() {
		return this.key;
	}

	long pid() {
		return this.process.pid();
	}

	boolean isAlive() {
		return this.process.isAlive();
	}

	/** Whether it has announced a grant and no revocation since, and is not paused. */
	boolean isAnnouncedLeader() {
		return this.announcedTerm > 0 && !this.stopped && this.process.isAlive();
	}

	/** Whether it has started its election. */
	boolean isReady() {
		return this.ready;
	}

	long announcedTerm() {
		return this.announcedTerm;
	}

	/**
	 * Calls back with the exit code if the process exits other than by {@link #kill} or
	 * {@link #terminate}.
	 */
	void onUnexpectedExit(IntConsumer callback) {
		this.process.onExit().thenAccept((exited) -> {
			if (!this.exitExpected) {
				callback.accept(exited.exitValue());
			}
		});
	}

	/** {@code kill -9}, and waits until the process is gone. */
	void kill() throws InterruptedException {
		this.exitExpected = true;
		this.process.destroyForcibly();
		this.process.waitFor();
	}

	/** Sends {@code SIGTERM} without waiting; {@link #terminate} waits. */
	void signalTerminate() {
		this.exitExpected = true;
		this.process.destroy();
	}

	/**
	 * {@code kill -TERM}: the node closes its engine (stops leading, then releases the
	 * lease) and exits; killed if it takes longer than the timeout.
	 * @return whether it exited by itself
	 */
	boolean terminate(long timeoutMillis) throws InterruptedException {
		this.exitExpected = true;
		this.process.destroy();
		if (this.process.waitFor(timeoutMillis, TimeUnit.MILLISECONDS)) {
			return true;
		}
		kill();
		return false;
	}

	void pause() throws IOException, InterruptedException {
		signal("STOP");
		this.stopped = true;
	}

	void resume() throws IOException, InterruptedException {
		signal("CONT");
		this.stopped = false;
	}

	private void signal(String signal) throws IOException, InterruptedException {
		Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(this.process.pid())).start();
		if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
			throw new IllegalStateException("kill -" + signal + " " + this.process.pid() + " failed");
		}
	}

	private void readAnnouncements() {
		try (BufferedReader reader = new BufferedReader(
				new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = reader.readLine()) != null) {
				String[] fields = line.split(" ");
				if (fields[0].equals("ready")) {
					this.ready = true;
				}
				else if (fields.length == 2 && fields[0].equals("leader")) {
					this.announcedTerm = Long.parseLong(fields[1]);
				}
				else if (fields.length == 2 && fields[0].equals("follower")) {
					this.announcedTerm = 0;
				}
			}
		}
		catch (IOException | NumberFormatException ex) {
			// The process is gone.
		}
		this.announcedTerm = 0;
	}

	@Override
	public String toString() {
		return this.key + "(pid " + this.process.pid() + ")";
	}

}
