package io.github.leaderelection.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP proxy between clients and one server, for the link faults that netem
 * would give where the kernel has none: a cut (no byte moves either way until it heals;
 * the bytes held meanwhile are delivered then, as TCP retransmission would, so the server
 * sees requests their client gave up on long ago), a link that fails one way (answers
 * held), a black hole (bytes swallowed for good), a refused server, added latency, reset
 * connections, and a switch to another server (a virtual address that moves).
 * <p>
 * The tests of every store, the chaos harness and the benchmarks share it.
 */
public final class TcpProxy implements AutoCloseable {

	private final ServerSocket server;

	private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();

	private final Object gate = new Object();

	private volatile int upstreamPort;

	private boolean cut;

	/** Only the server's answers stop: requests still arrive (a half-open link). */
	private boolean answersHeld;

	private volatile boolean blackholed;

	private volatile boolean refusing;

	private volatile long latencyMillis;

	private volatile boolean closed;

	public TcpProxy(int upstreamPort) throws IOException {
		this.upstreamPort = upstreamPort;
		this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		Thread acceptor = new Thread(this::accept, "proxy-" + this.server.getLocalPort() + "-accept");
		acceptor.setDaemon(true);
		acceptor.start();
	}

	/** The port clients connect to. */
	public int port() {
		return this.server.getLocalPort();
	}

	/** {@code 127.0.0.1:port}, as a ZooKeeper connect string. */
	public String connectString() {
		return "127.0.0.1:" + port();
	}

	/** The port of the server behind the proxy. */
	public int upstreamPort() {
		return this.upstreamPort;
	}

	/**
	 * Stops every byte, both ways, on open and new connections, until {@link #heal()},
	 * which delivers what was held.
	 */
	public void cut() {
		synchronized (this.gate) {
			this.cut = true;
		}
	}

	/**
	 * Stops the bytes from the server to the clients, on open and new connections, until
	 * {@link #heal()}: the server gets every request and acts on it, the clients never
	 * hear back, as on a link that fails one way.
	 */
	public void holdAnswers() {
		synchronized (this.gate) {
			this.answersHeld = true;
		}
	}

	/**
	 * Swallows every byte from now on, as a network partition that drops packets: both
	 * ends wait until they time out, and nothing is delivered later.
	 */
	public void blackhole() {
		this.blackholed = true;
	}

	/** Closes the open connections and refuses new ones, as a crashed server would. */
	public void refuse() {
		this.refusing = true;
		dropConnections();
	}

	/**
	 * Ends every fault above: held bytes are delivered, new connections accepted. Open
	 * connections stay open; after a black hole their streams are no longer framed, so
	 * drop them too ({@link #dropConnections()}).
	 */
	public void heal() {
		this.blackholed = false;
		this.refusing = false;
		synchronized (this.gate) {
			this.cut = false;
			this.answersHeld = false;
			this.gate.notifyAll();
		}
	}

	/** Closes every open connection, as a reset would; clients connect again at once. */
	public void dropConnections() {
		for (Socket socket : this.sockets) {
			this.sockets.remove(socket);
			closeQuietly(socket);
		}
	}

	/** Delays every chunk by the given time in each direction; zero for none. */
	public void latency(Duration latency) {
		this.latencyMillis = latency.toMillis();
	}

	/** Forwards new connections to the given port and drops the open ones. */
	public void switchTo(int port) {
		this.upstreamPort = port;
		dropConnections();
	}

	@Override
	public void close() {
		this.closed = true;
		heal();
		closeQuietly(this.server);
		dropConnections();
	}

	private void accept() {
		while (!this.closed) {
			Socket client;
			try {
				client = this.server.accept();
			}
			catch (IOException ex) {
				return; // closed
			}
			if (this.refusing) {
				closeQuietly(client);
				continue;
			}
			this.sockets.add(client);
			Thread connector = new Thread(() -> connect(client), "proxy-" + port() + "-connect");
			connector.setDaemon(true);
			connector.start();
		}
	}

	private void connect(Socket client) {
		Socket upstream = new Socket();
		try {
			client.setTcpNoDelay(true);
			// Accepted, then silence: during a cut the upstream connection is not even
			// opened.
			awaitOpen(false);
			upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.upstreamPort), 2000);
			upstream.setTcpNoDelay(true);
			this.sockets.add(upstream);
			pump(client, upstream, false);
			pump(upstream, client, true);
		}
		catch (IOException | InterruptedException ex) {
			// The server is down: the client sees the drop and retries.
			closeQuietly(client);
			closeQuietly(upstream);
			this.sockets.remove(client);
		}
	}

	private void pump(Socket from, Socket to, boolean answers) {
		Thread thread = new Thread(() -> {
			byte[] buffer = new byte[16384];
			try {
				InputStream in = from.getInputStream();
				OutputStream out = to.getOutputStream();
				while (true) {
					awaitOpen(answers);
					int read = in.read(buffer);
					if (read < 0) {
						break;
					}
					long latency = this.latencyMillis;
					if (latency > 0) {
						Thread.sleep(latency);
					}
					awaitOpen(answers);
					if (!this.blackholed) {
						out.write(buffer, 0, read);
						out.flush();
					}
				}
			}
			catch (IOException | InterruptedException ex) {
				// A side closed or reset: close the other one too.
			}
			closeQuietly(from);
			closeQuietly(to);
			this.sockets.remove(from);
			this.sockets.remove(to);
		}, "proxy-" + port() + (answers ? "-down" : "-up"));
		thread.setDaemon(true);
		thread.start();
	}

	private void awaitOpen(boolean answers) throws InterruptedException {
		synchronized (this.gate) {
			while ((this.cut || (answers && this.answersHeld)) && !this.closed) {
				this.gate.wait();
			}
		}
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// Already closed.
		}
	}

}
