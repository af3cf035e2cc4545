package io.github.leaderelection.testing;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;

import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

/**
 * A {@code redis-server} process of a test's own, on a free loopback port and without
 * persistence, that the test may restart, flush or kill. Every server still running when
 * the JVM exits is killed.
 */
public final class LocalRedisServer implements AutoCloseable {

	private static final Set<Process> running = ConcurrentHashMap.newKeySet();

	static {
		Runtime.getRuntime().addShutdownHook(new Thread(() -> running.forEach(Process::destroyForcibly)));
	}

	private final int port;

	private final Path directory;

	/** The command line after the executable. */
	private final List<String> arguments = new ArrayList<>();

	private Process process;

	private LocalRedisServer(int port) throws IOException {
		this.port = port;
		this.directory = Files.createTempDirectory("leader-election-redis-" + port + "-");
	}

	/**
	 * Starts a server with the given extra arguments, such as
	 * {@code --replicaof host port}.
	 */
	public static LocalRedisServer start(String... extraArguments) {
		return start(freePort(false), extraArguments);
	}

	public static LocalRedisServer start(int port, String... extraArguments) {
		try {
			LocalRedisServer server = new LocalRedisServer(port);
			server.arguments.addAll(List.of("--port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "",
					"--appendonly", "no", "--repl-diskless-sync-delay", "0", "--dir", server.directory.toString(),
					"--loglevel", "warning"));
			server.arguments.addAll(List.of(extraArguments));
			server.launch();
			return server;
		}
		catch (IOException ex) {
			return fail("Could not start redis-server", ex);
		}
	}

	/**
	 * Starts a Sentinel that alone decides failovers of the master named {@code mymaster}
	 * on the given port, one second after it stops answering.
	 */
	public static LocalRedisServer startSentinel(int masterPort) {
		return startSentinel(masterPort, Duration.ofSeconds(1), Duration.ofSeconds(5));
	}

	/**
	 * Starts a Sentinel that alone decides failovers of the master named {@code mymaster}
	 * on the given port, once it has not answered for {@code downAfter}.
	 * @param failoverTimeout Sentinel's {@code failover-timeout}: it starts no second
	 * failover of the master within twice that
	 */
	public static LocalRedisServer startSentinel(int masterPort, Duration downAfter, Duration failoverTimeout) {
		try {
			int port = freePort(false);
			LocalRedisServer sentinel = new LocalRedisServer(port);
			Path config = sentinel.directory.resolve("sentinel.conf");
			Files.writeString(config,
					String.join("\n", "port " + port, "bind 127.0.0.1", "dir " + sentinel.directory,
							"sentinel monitor mymaster 127.0.0.1 " + masterPort + " 1",
							"sentinel down-after-milliseconds mymaster " + downAfter.toMillis(),
							"sentinel failover-timeout mymaster " + failoverTimeout.toMillis(), ""));
			sentinel.arguments.addAll(List.of(config.toString(), "--sentinel"));
			sentinel.launch();
			return sentinel;
		}
		catch (IOException ex) {
			return fail("Could not start redis-server --sentinel", ex);
		}
	}

	/**
	 * A free loopback port; for a cluster node, one whose bus port (+10000) is free too.
	 */
	public static int freePort(boolean withBusPort) {
		for (int attempt = 0; attempt < 100; attempt++) {
			try (ServerSocket socket = new ServerSocket(0)) {
				int port = socket.getLocalPort();
				if (port < 55535 && (!withBusPort || isFree(port + 10000))) {
					return port;
				}
			}
			catch (IOException ex) {
				// try another
			}
		}
		return fail("No free port pair found");
	}

	private static boolean isFree(int port) {
		try (ServerSocket socket = new ServerSocket(port)) {
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	public int port() {
		return this.port;
	}

	public RedisConfiguration configuration() {
		return new RedisStandaloneConfiguration("127.0.0.1", this.port);
	}

	/**
	 * Kills the server at once (SIGKILL) and starts it again, empty, on the same port.
	 */
	public void restart() throws IOException {
		kill();
		launch();
	}

	/**
	 * Kills the server at once (SIGKILL) and starts it again, empty, on the same port, as
	 * a replica of the given master.
	 */
	public void restartAsReplicaOf(int masterPort) throws IOException {
		kill();
		int replicaOf = this.arguments.indexOf("--replicaof");
		if (replicaOf >= 0) {
			this.arguments.subList(replicaOf, replicaOf + 3).clear();
		}
		this.arguments.addAll(List.of("--replicaof", "127.0.0.1", Integer.toString(masterPort)));
		launch();
	}

	/** Kills the server at once (SIGKILL). */
	public void kill() {
		Process current = this.process;
		if (current != null) {
			current.destroyForcibly();
			try {
				current.waitFor();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			running.remove(current);
		}
	}

	/**
	 * Sends one command and returns its reply: a status, error, integer or bulk string as
	 * text.
	 */
	public String command(String... words) {
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.setSoTimeout(5000);
			OutputStream out = socket.getOutputStream();
			StringBuilder request = new StringBuilder("*").append(words.length).append("\r\n");
			for (String word : words) {
				request.append('$')
					.append(word.getBytes(StandardCharsets.UTF_8).length)
					.append("\r\n")
					.append(word)
					.append("\r\n");
			}
			out.write(request.toString().getBytes(StandardCharsets.UTF_8));
			out.flush();
			DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
			String line = readLine(in);
			if (!line.startsWith("$")) {
				return line;
			}
			int length = Integer.parseInt(line.substring(1));
			if (length < 0) {
				return "";
			}
			byte[] bulk = new byte[length];
			in.readFully(bulk);
			return new String(bulk, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new IllegalStateException("redis-server on port " + this.port + " did not answer", ex);
		}
	}

	private static String readLine(DataInputStream in) throws IOException {
		StringBuilder line = new StringBuilder();
		int c;
		while ((c = in.read()) >= 0 && c != '\n') {
			if (c != '\r') {
				line.append((char) c);
			}
		}
		return line.toString();
	}

	public boolean answers() {
		try {
			return command("PING").startsWith("+PONG");
		}
		catch (IllegalStateException ex) {
			return false;
		}
	}

	/** The server's log file. */
	public Path log() {
		return this.directory.resolve("redis.log");
	}

	/** Kills the server and deletes its directory. */
	@Override
	public void close() {
		kill();
		try (Stream<Path> files = Files.walk(this.directory)) {
			files.sorted(Comparator.reverseOrder()).forEach((file) -> file.toFile().delete());
		}
		catch (IOException ex) {
			// left in the temporary directory
		}
	}

	private void launch() throws IOException {
		List<String> command = new ArrayList<>();
		command.add(executable());
		command.addAll(this.arguments);
		this.process = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(this.directory.resolve("redis.log").toFile())
			.start();
		running.add(this.process);
		await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10)).until(() -> {
			if (!this.process.isAlive()) {
				fail("redis-server exited: " + Files.readString(this.directory.resolve("redis.log")));
			}
			return answers();
		});
	}

	private static String executable() {
		for (String candidate : List.of("/usr/bin/redis-server", "/usr/local/bin/redis-server")) {
			if (Files.isExecutable(Path.of(candidate))) {
				return candidate;
			}
		}
		return "redis-server"; // from the PATH, or a failure that names it
	}

}
