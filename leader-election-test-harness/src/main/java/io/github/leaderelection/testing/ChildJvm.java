package io.github.leaderelection.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A JVM started by a harness (the chaos harness's nodes, the benchmarks' nodes) on this
 * JVM's class path: its standard output read line by line, its error output in a file,
 * its standard input for commands, and the signals the harnesses send it.
 */
public final class ChildJvm {

	private final Process process;

	private final Writer stdin;

	private ChildJvm(Process process, Consumer<String> lines, String name) {
		this.process = process;
		this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
		Thread reader = new Thread(() -> read(lines), name + "-stdout");
		reader.setDaemon(true);
		reader.start();
	}

	/**
	 * The command that runs a main class on this JVM's class path with this JVM's
	 * {@code java}.
	 * @param jvmOptions options such as {@code -Xmx128m}
	 * @param mainClass the class to run
	 * @param arguments its arguments
	 * @return the command
	 */
	public static List<String> command(List<String> jvmOptions, Class<?> mainClass, List<String> arguments) {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.addAll(jvmOptions);
		command.add("-cp");
		// Under Surefire, java.class.path may name only its booter jar.
		command.add(System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
		command.add(mainClass.getName());
		command.addAll(arguments);
		return command;
	}

	/**
	 * Starts a JVM.
	 * @param name a name for its reader thread
	 * @param command the command, see {@link #command}
	 * @param environment variables added to this JVM's environment
	 * @param errorFile where its error output goes (appended)
	 * @param lines called with each line of its standard output, then with {@code null}
	 * when the output ends
	 * @return the started JVM
	 * @throws IOException if it cannot be started
	 */
	public static ChildJvm start(String name, List<String> command, Map<String, String> environment, Path errorFile,
			Consumer<String> lines) throws IOException {
		ProcessBuilder builder = new ProcessBuilder(command)
			.redirectError(ProcessBuilder.Redirect.appendTo(errorFile.toFile()));
		builder.environment().putAll(environment);
		return new ChildJvm(builder.start(), lines, name);
	}

	public long pid() {
		return this.process.pid();
	}

	public boolean isAlive() {
		return this.process.isAlive();
	}

	/**
	 * Completes when the process has exited.
	 * @return its exit code, once known
	 */
	public CompletableFuture<Integer> onExit() {
		return this.process.onExit().thenApply(Process::exitValue);
	}

	/**
	 * Writes a line to its standard input.
	 * @param line the line, without its end
	 * @throws IOException if the process no longer reads
	 */
	public void send(String line) throws IOException {
		synchronized (this.stdin) {
			this.stdin.write(line + "\n");
			this.stdin.flush();
		}
	}

	/**
	 * Closes its standard input, which a JVM that reads commands takes as "stop".
	 * @throws IOException if closing fails
	 */
	public void closeInput() throws IOException {
		synchronized (this.stdin) {
			this.stdin.close();
		}
	}

	/**
	 * Sends a signal with {@code kill}, such as {@code STOP} or {@code CONT}.
	 * @param signal the signal's name without {@code SIG}
	 * @throws IOException if {@code kill} cannot run
	 * @throws InterruptedException if interrupted while waiting for it
	 */
	public void signal(String signal) throws IOException, InterruptedException {
		Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(this.process.pid())).start();
		if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
			throw new IllegalStateException("kill -" + signal + " " + this.process.pid() + " failed");
		}
	}

	/** {@code SIGTERM}, without waiting. */
	public void terminate() {
		this.process.destroy();
	}

	/** {@code SIGKILL}, without waiting: no shutdown hook runs. */
	public void kill() {
		this.process.destroyForcibly();
	}

	/**
	 * Waits for the process to exit.
	 * @param timeoutMillis how long to wait
	 * @return whether it exited
	 * @throws InterruptedException if interrupted while waiting
	 */
	public boolean awaitExit(long timeoutMillis) throws InterruptedException {
		return this.process.waitFor(timeoutMillis, TimeUnit.MILLISECONDS);
	}

	/**
	 * {@code SIGTERM}, then {@code SIGKILL} if it has not exited within the timeout.
	 * @param timeoutMillis how long it may take to exit by itself
	 * @return whether it exited by itself
	 * @throws InterruptedException if interrupted while waiting
	 */
	public boolean terminate(long timeoutMillis) throws InterruptedException {
		terminate();
		if (awaitExit(timeoutMillis)) {
			return true;
		}
		kill();
		this.process.waitFor();
		return false;
	}

	private void read(Consumer<String> lines) {
		try (BufferedReader reader = new BufferedReader(
				new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = reader.readLine()) != null) {
				lines.accept(line);
			}
		}
		catch (IOException | RuntimeException ex) {
			// The process is gone, or the line was not what the harness expected.
		}
		lines.accept(null);
	}

	@Override
	public String toString() {
		return "pid " + this.process.pid();
	}

}
