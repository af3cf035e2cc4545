package io.github.leaderelection.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A store server that a test runs itself on a spare port, so that it can crash and
 * restart it. Its data lives under the run's directory; {@link #close()} leaves no
 * process behind.
 */
public abstract class StoreServer implements AutoCloseable {

	/** The database that a database server creates for its tests. */
	public static final String DATABASE = "test";

	private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

	private static final String PID_FILE = "server.pid";

	/** Every port {@link #freePort()} handed out in this JVM. */
	private static final Set<Integer> givenPorts = ConcurrentHashMap.newKeySet();

	protected final Path directory;

	protected final int port;

	private Process process;

	/**
	 * A server whose files go to the given directory, emptied first: each server starts
	 * from nothing.
	 * @param directory a directory of the server's own
	 * @throws IOException if the directory cannot be made
	 */
	public StoreServer(Path directory) throws IOException {
		this.directory = directory;
		this.port = freePort();
		deleteRecursively(directory);
		Files.createDirectories(directory);
	}

	private static void deleteRecursively(Path path) throws IOException {
		if (!Files.exists(path)) {
			return;
		}
		try (Stream<Path> files = Files.walk(path)) {
			for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
				Files.deleteIfExists(file);
			}
		}
	}

	/** Creates the store's files and starts it; returns once it answers. */
	public abstract void start() throws Exception;

	/**
	 * Stops the server: a crash ({@code kill -9}, or what the server treats as one) or a
	 * clean shutdown. By default {@code SIGKILL} or {@code SIGTERM} to the server's
	 * process, then waits for it to exit.
	 */
	public void stop(boolean crash) throws Exception {
		signal(crash ? "KILL" : "TERM");
		awaitExit();
	}

	/** Starts the server again on the same port and data, and returns once it answers. */
	public abstract void restart() throws Exception;

	/** Whether the server answers now. */
	public abstract boolean answers();

	public int port() {
		return this.port;
	}

	/** Where a client connects, {@code host:port}; a list for a replicated store. */
	public String clientAddress() {
		return "127.0.0.1:" + port();
	}

	/**
	 * The JDBC URL of {@link #DATABASE}, with connect and socket timeouts, when this
	 * server is a database.
	 */
	public String jdbcUrl() {
		throw new UnsupportedOperationException(getClass().getSimpleName() + " holds no fenced table");
	}

	public String jdbcUser() {
		throw new UnsupportedOperationException(getClass().getSimpleName() + " holds no fenced table");
	}

	@Override
	public void close() throws Exception {
		if (this.process != null && this.process.isAlive()) {
			stop(false);
		}
		Process current = this.process;
		if (current != null && current.isAlive()) {
			current.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
		}
	}

	// Helpers for servers that are processes

	protected void launch(List<String> command, String logName) throws IOException {
		Path logFile = this.directory.resolve(logName);
		this.process = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
			.start();
		Files.writeString(this.directory.resolve(PID_FILE), this.process.pid() + " " + this.port);
	}

	/**
	 * Kills the servers that a run in the given directory left running (its JVM was
	 * killed before it could stop them), recognised by their pid files and their command
	 * lines naming the directory.
	 */
	public static void killLeftovers(Path runDirectory) throws IOException {
		if (!Files.isDirectory(runDirectory)) {
			return;
		}
		// A replicated store's servers keep their pid files one level further down
		// (store/a/server.pid).
		try (Stream<Path> files = Files.walk(runDirectory, 3)) {
			for (Path pidFile : files.filter((file) -> file.getFileName().toString().equals(PID_FILE)).toList()) {
				String directory = pidFile.getParent().toAbsolutePath().toString();
				String[] pidAndPort = Files.readString(pidFile).trim().split(" ");
				// Redis rewrites its command line to "redis-server 127.0.0.1:<port>".
				ProcessHandle.of(Long.parseLong(pidAndPort[0]))
					.filter((server) -> server.info()
						.commandLine()
						.map((line) -> line.contains(directory) || line.contains("127.0.0.1:" + pidAndPort[1]))
						.orElse(false))
					.ifPresent((server) -> {
						server.destroyForcibly();
						server.onExit().orTimeout(10, TimeUnit.SECONDS).exceptionally((ex) -> null).join();
					});
			}
		}
	}

	protected Process process() {
		return this.process;
	}

	protected void signal(String signal) throws IOException, InterruptedException {
		run(List.of("kill", "-" + signal, Long.toString(this.process.pid())), this.directory.resolve("signals.log"));
	}

	protected void awaitExit() throws InterruptedException {
		if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
			this.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
		}
	}

	protected void awaitReady(String what) throws InterruptedException {
		long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
		while (!answers()) {
			if (this.process != null && !this.process.isAlive()) {
				throw new IllegalStateException(
						what + " exited with " + this.process.exitValue() + "; see " + this.directory);
			}
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException(
						what + " did not answer within " + READY_TIMEOUT + "; see " + this.directory);
			}
			Thread.sleep(25);
		}
	}

	/** Runs a command to its end, failing with its output if it fails. */
	protected static void run(List<String> command, Path logFile) throws IOException, InterruptedException {
		Process process = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
			.start();
		if (!process.waitFor(120, TimeUnit.SECONDS)) {
			process.destroyForcibly();
			throw new IllegalStateException("Timed out: " + String.join(" ", command));
		}
		if (process.exitValue() != 0) {
			throw new IllegalStateException("Failed with exit code " + process.exitValue() + ": "
					+ String.join(" ", command) + "\n" + tail(logFile));
		}
	}

	/** The path of an executable, or a failure that says how to install it. */
	protected static String require(String what, String debianPackage, String... candidates) {
		for (String candidate : candidates) {
			if (Files.isExecutable(Path.of(candidate))) {
				return candidate;
			}
		}
		throw new IllegalStateException("This test needs " + what + " (looked at " + String.join(", ", candidates)
				+ "). Install it, for example with: apt-get install -y " + debianPackage);
	}

	/**
	 * A loopback port that is free now and that this JVM has not handed out before: the
	 * system may give a port it just freed to the next caller, and two servers started
	 * together (an etcd member's client port and another's peer port) must not get the
	 * same one.
	 */
	public static int freePort() throws IOException {
		while (true) {
			try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
				if (givenPorts.add(socket.getLocalPort())) {
					return socket.getLocalPort();
				}
			}
		}
	}

	private static String tail(Path file) {
		try {
			List<String> lines = Files.readAllLines(file);
			return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
		}
		catch (IOException ex) {
			return "(no output)";
		}
	}

}
