package io.github.leaderelection.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The coordinator's handle on a node JVM: starts it, sends it commands, and turns its
 * protocol lines into {@link Event}s on a queue shared by all nodes of a measurement.
 */
final class NodeProcess implements AutoCloseable {

	/**
	 * JVM options of every node: small heaps, as on a real service with one job
	 * scheduler.
	 */
	static final List<String> JVM_OPTIONS = List.of("-Xms64m", "-Xmx256m", "-XX:+UseSerialGC",
			"-Dlogback.configurationFile=logback-node.xml");

	/**
	 * Failover nodes also stop at the C1 compiler: they start several times faster on two
	 * busy cores, and what they measure is waiting, not computing.
	 */
	static final List<String> FAILOVER_JVM_OPTIONS = List.of("-Xms64m", "-Xmx256m", "-XX:+UseSerialGC",
			"-XX:TieredStopAtLevel=1", "-Dlogback.configurationFile=logback-node.xml");

	record Event(NodeProcess node, String type, String group, long nanos, String candidate, String line) {
	}

	final String id;

	private final Process process;

	private final Writer stdin;

	private final BlockingQueue<Event> events;

	private final List<Event> own = new java.util.LinkedList<>();

	private NodeProcess(String id, Process process, BlockingQueue<Event> events) {
		this.id = id;
		this.process = process;
		this.events = events;
		this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
		Thread reader = new Thread(this::read, "node-reader-" + id);
		reader.setDaemon(true);
		reader.start();
	}

	static NodeProcess start(Contender contender, String id, int groups, int candidates, Timing timing,
			boolean autostart, BlockingQueue<Event> events, Path logDir) throws IOException {
		return start(contender, id, groups, candidates, timing, autostart, events, logDir, JVM_OPTIONS);
	}

	static NodeProcess start(Contender contender, String id, int groups, int candidates, Timing timing,
			boolean autostart, BlockingQueue<Event> events, Path logDir, List<String> jvmOptions) throws IOException {
		List<String> command = new ArrayList<>();
		command.add(ProcessHandle.current().info().command().orElse("java"));
		command.addAll(jvmOptions);
		command.addAll(Coordinates.systemProperties());
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(NodeMain.class.getName());
		command.add(contender.id());
		command.add(id);
		command.add(Integer.toString(groups));
		command.add(Integer.toString(candidates));
		command.add(timing.args());
		command.add(Boolean.toString(autostart));
		Files.createDirectories(logDir);
		ProcessBuilder builder = new ProcessBuilder(command);
		builder.redirectError(
				ProcessBuilder.Redirect.appendTo(logDir.resolve(contender.id() + "-" + id + ".log").toFile()));
		return new NodeProcess(id, builder.start(), events);
	}

	private void read() {
		try (BufferedReader reader = new BufferedReader(
				new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = reader.readLine()) != null) {
				if (!line.startsWith("@")) {
					continue;
				}
				String[] parts = line.split(" ");
				String type = parts[0].substring(1);
				Event event = switch (type) {
					case "G", "R" -> new Event(this, type, parts[1], Long.parseLong(parts[2]), parts[3], line);
					case "STATS" -> new Event(this, type, "", 0, "", line);
					default -> new Event(this, type, "", Long.parseLong(parts[1]), "", line);
				};
				add(event);
				if (this.events != null) {
					this.events.add(event);
				}
			}
		}
		catch (IOException | RuntimeException ex) {
			// the process ended
		}
		add(new Event(this, "EOF", "", System.nanoTime(), "", ""));
	}

	private void add(Event event) {
		synchronized (this.own) {
			this.own.add(event);
			this.own.notifyAll();
		}
	}

	/**
	 * Waits for this node's next event of a type that no earlier call took; events of
	 * other types stay for the calls that want them (a grant can come before READY).
	 */
	Event await(String type, long timeoutMillis) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
		synchronized (this.own) {
			while (true) {
				for (java.util.Iterator<Event> it = this.own.iterator(); it.hasNext();) {
					Event event = it.next();
					if (event.type.equals(type)) {
						it.remove();
						return event;
					}
					if (event.type.equals("EOF")) {
						throw new IllegalStateException("Node " + this.id + " ended before sending " + type);
					}
				}
				long remaining = deadline - System.nanoTime();
				if (remaining <= 0) {
					throw new IllegalStateException(
							"Node " + this.id + " sent no " + type + " within " + timeoutMillis + " ms");
				}
				TimeUnit.NANOSECONDS.timedWait(this.own, remaining);
			}
		}
	}

	void send(String command) throws IOException {
		this.stdin.write(command + "\n");
		this.stdin.flush();
	}

	/**
	 * Asks for statistics and parses the answer into numbers (and {@code families} as
	 * text).
	 */
	Map<String, String> stats(boolean gc) throws Exception {
		send(gc ? "stats-gc" : "stats");
		Event event = await("STATS", 30000);
		Map<String, String> values = new HashMap<>();
		for (String part : event.line.split(" ")) {
			int eq = part.indexOf('=');
			if (eq > 0) {
				values.put(part.substring(0, eq), part.substring(eq + 1));
			}
		}
		return values;
	}

	long pid() {
		return this.process.pid();
	}

	/** SIGKILL: no shutdown hook, no release. */
	void kill() {
		this.process.destroyForcibly();
	}

	boolean awaitExit(long timeoutMillis) throws InterruptedException {
		return this.process.waitFor(timeoutMillis, TimeUnit.MILLISECONDS);
	}

	/** Stops gracefully if it can within the timeout, then kills. */
	void stop(long timeoutMillis) throws InterruptedException {
		if (!this.process.isAlive()) {
			return;
		}
		try {
			send("stop");
		}
		catch (IOException ex) {
			// already gone
		}
		if (!awaitExit(timeoutMillis)) {
			kill();
			awaitExit(5000);
		}
	}

	@Override
	public void close() throws InterruptedException {
		if (this.process.isAlive()) {
			kill();
			awaitExit(5000);
		}
	}

	static Map<NodeProcess, Event> none() {
		return new HashMap<>();
	}

}
