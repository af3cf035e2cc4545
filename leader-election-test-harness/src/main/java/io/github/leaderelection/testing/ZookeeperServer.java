package io.github.leaderelection.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.Map;

import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * A ZooKeeper server in the harness's JVM (curator-test's {@code TestingServer}, the real
 * server code), keeping its data across restarts. Its tick of 250 ms allows sessions of
 * 0.5 to 5 seconds.
 */
public final class ZookeeperServer extends StoreServer {

	public static final int TICK_MILLIS = 250;

	private TestingServer server;

	public ZookeeperServer(Path directory) throws IOException {
		super(directory);
	}

	@Override
	public void start() throws Exception {
		InstanceSpec spec = new InstanceSpec(this.directory.resolve("data").toFile(), this.port, -1, -1, false, -1,
				TICK_MILLIS, -1, Map.of("admin.enableServer", "false"));
		this.server = new TestingServer(spec, true);
	}

	@Override
	public void restart() throws Exception {
		this.server.restart();
	}

	@Override
	public void stop(boolean crash) throws Exception {
		// In one JVM a crash and a stop look alike: the server closes its sockets and
		// keeps its data.
		this.server.stop();
	}

	@Override
	public boolean answers() {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.port), 500);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	@Override
	public void close() throws Exception {
		if (this.server != null) {
			this.server.close();
		}
	}

}
