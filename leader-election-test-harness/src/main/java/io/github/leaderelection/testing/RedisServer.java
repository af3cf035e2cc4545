package io.github.leaderelection.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/**
 * A Redis server of a test's own, without persistence: a restart loses every key, which
 * is the data loss the Redis lease store must survive.
 */
public final class RedisServer extends StoreServer {

	private final String redisServer;

	public RedisServer(Path directory) throws Exception {
		super(directory);
		this.redisServer = require("the Redis server", "redis-server", "/usr/bin/redis-server",
				"/usr/local/bin/redis-server");
	}

	@Override
	public void start() throws Exception {
		restart();
	}

	@Override
	public void restart() throws Exception {
		launch(List.of(this.redisServer, "--port", Integer.toString(this.port), "--bind", "127.0.0.1", "--save", "",
				"--appendonly", "no", "--daemonize", "no", "--dir", this.directory.toAbsolutePath().toString()),
				"redis.log");
		awaitReady("Redis on port " + this.port);
	}

	@Override
	public boolean answers() {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.port), 500);
			socket.setSoTimeout(500);
			OutputStream out = socket.getOutputStream();
			out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			byte[] answer = new byte[5];
			int read = in.readNBytes(answer, 0, 5);
			return read == 5 && new String(answer, StandardCharsets.US_ASCII).equals("+PONG");
		}
		catch (IOException ex) {
			return false;
		}
	}

}
