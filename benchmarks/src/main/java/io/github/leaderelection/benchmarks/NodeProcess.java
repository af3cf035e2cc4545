package io.github.leaderelection.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

import io.github.leaderelection.testing.ChildJvm;

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

	private final BlockingQueue<Event> events;

	private final List<Event> own = new java.util.LinkedList<>();

	private ChildJvm jvm;

	private NodeProcess(String id, BlockingQueue<Event> events) {
		this.id = id;
		this.events = events;
	}

	static NodeProcess start(Contender contender, String id, int groups, int candidates, Timing timing,
			boolean autostart, BlockingQueue<Event> events, Path logDir) throws IOException {
		return start(contender, id, groups, candidates, timing, autostart, events, logDir, JVM_OPTIONS);
	}

	static NodeProcess start(Contender contender, String id, int groups, int candidates, Timing timing,
			boolean autostart, BlockingQueue<Event> events, Path logDir, List<String> jvmOptions) throws IOException {
		return start(contender, id, groups, candidates, timing, autostart, events, logDir, jvmOptions, List.of());
	}

	/**
	 * @param nodeOptions options after the node's fixed arguments, such as
	 * {@code balance=1} (see {@link NodeMain})
	 */
	static NodeProcess start(Contender contender, String id, int groups, int candidates, Timing timing,
			boolean autostart, BlockingQueue<Event> events, Path logDir, List<String> jvmOptions,
			List<String> nodeOptions) throws IOException {
		List<String> options = new ArrayList<>(jvmOptions);
		options.addAll(Coordinates.systemProperties());
		List<String> arguments = new ArrayList<>(List.of(contender.id(), id, Integer.toString(groups),
				Integer.toString(candidates), timing.args(), Boolean.toString(autostart)));
		arguments.addAll(nodeOptions);
		List<String> command = ChildJvm.command(options, NodeMain.class, arguments);
		Files.createDirectories(logDir);
		NodeProcess node = new NodeProcess(id, events);
		node.jvm = ChildJvm.start("node-reader-" + id, command, Map.of(),
				logDir.resolve(contender.id() + "-" + id + ".log"), node::read);
		return node;
	}

	private void read(String line) {
		if (line == null) {
			add(new Event(this, "EOF", "", System.nanoTime(), "", ""));
			return;
		}
		if (!line.startsWith("@")) {
			return;
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

	/** Takes this node's events of a type that no call took yet, oldest first. */
	List<Event> takeAll(String type) {
		List<Event> taken = new ArrayList<>();
		synchronized (this.own) {
			for (java.util.Iterator<Event> it = this.own.iterator(); it.hasNext();) {
				Event event = it.next();
				if (event.type.equals(type)) {
					it.remove();
					taken.add(event);
				}
			}
		}
		return taken;
	}

	void send(String command) throws IOException {
		this.jvm.send(command);
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
		return this.jvm.pid();
	}

	/** SIGKILL: no shutdown hook, no release. */
	void kill() {
		this.jvm.kill();
	}

	boolean awaitExit(long timeoutMillis) throws InterruptedException {
		return this.jvm.awaitExit(timeoutMillis);
	}

	/** Stops gracefully if it can within the timeout, then kills. */
	void stop(long timeoutMillis) throws InterruptedException {
		if (!this.jvm.isAlive()) {
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
		if (this.jvm.isAlive()) {
			kill();
			awaitExit(5000);
		}
	}

	static Map<NodeProcess, Event> none() {
		return new HashMap<>();
	}

}
