package io.github.leaderelection.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts, with Redis's {@code MONITOR}, the commands that name the benchmark's keys:
 * those sent by clients (the requests) apart from those that Lua scripts run inside one
 * request. The server's {@code INFO commandstats} cannot tell the two apart and counts
 * other clients of a shared server too.
 */
final class RedisMonitor implements AutoCloseable {

	private final Socket socket;

	final LongAdder requests = new LongAdder();

	final LongAdder scriptCommands = new LongAdder();

	final Map<String, LongAdder> byCommand = new ConcurrentHashMap<>();

	private RedisMonitor(Socket socket) {
		this.socket = socket;
	}

	static RedisMonitor start() throws IOException {
		Socket socket = new Socket(Store.redisHost(), Store.redisPort());
		socket.getOutputStream().write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
		socket.getOutputStream().flush();
		BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
		String ok = in.readLine();
		if (ok == null || !ok.startsWith("+OK")) {
			socket.close();
			throw new IOException("Redis refused MONITOR: " + ok);
		}
		RedisMonitor monitor = new RedisMonitor(socket);
		Thread reader = new Thread(() -> monitor.read(in), "redis-monitor");
		reader.setDaemon(true);
		reader.start();
		return monitor;
	}

	private void read(BufferedReader in) {
		try {
			String line;
			while ((line = in.readLine()) != null) {
				// +1700000000.123456 [0 127.0.0.1:54321] "evalsha" "..." "2"
				// "bench-le:{bench}:lease" ...
				if (!line.contains("\"" + Store.REDIS_OURS_PREFIX) && !line.contains("\"" + Store.REDIS_SI_REGISTRY)) {
					continue;
				}
				int bracket = line.indexOf(']');
				if (bracket < 0) {
					continue;
				}
				if (line.substring(0, bracket).endsWith(" lua")) {
					this.scriptCommands.increment();
					continue;
				}
				this.requests.increment();
				int start = line.indexOf('"', bracket);
				int end = (start >= 0) ? line.indexOf('"', start + 1) : -1;
				String command = (end > start) ? line.substring(start + 1, end).toLowerCase() : "?";
				this.byCommand.computeIfAbsent(command, (c) -> new LongAdder()).increment();
			}
		}
		catch (IOException ex) {
			// closed
		}
	}

	Map<String, Object> perSecond(long millis) {
		Map<String, Object> rates = new TreeMap<>();
		this.byCommand.forEach((command, count) -> rates.put(command, count.sum() * 1000.0 / millis));
		rates.put("(commands run inside scripts)", this.scriptCommands.sum() * 1000.0 / millis);
		return rates;
	}

	@Override
	public void close() throws IOException {
		this.socket.close();
	}

}
