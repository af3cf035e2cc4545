package io.github.leaderelection.chaos;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP proxy between one node and its store, with the two faults the kernel's netem
 * would give: a black hole (connections stay open and new ones are accepted, but no byte
 * moves in either direction until it heals, as with a dropped-packets partition; nothing
 * is reset) and added latency. Bytes held during a cut are delivered when it heals, as
 * TCP retransmission would, so a store sees requests that their client gave up on long
 * ago.
 */
final class TcpProxy implements AutoCloseable {

	private final int upstreamPort;

	private final ServerSocket server;

	private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();

	private final Object gate = new Object();

	private boolean cut;

	/** Only the server's answers stop: requests still arrive (a half-open link). */
	private boolean answersHeld;

	private volatile long latencyMillis;

	private volatile boolean closed;

	TcpProxy(int upstreamPort) throws IOException {
		this.upstreamPort = upstreamPort;
		this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		Thread acceptor = new Thread(this::accept, "proxy-" + this.server.getLocalPort() + "-accept");
		acceptor.setDaemon(true);
		acceptor.start();
	}

	int port() {
		return this.server.getLocalPort();
	}

	/**
	 * Stops every byte, both ways, on open and new connections, until {@link #heal()}.
	 */
	void cut() {
		synchronized (this.gate) {
			this.cut = true;
		}
	}

	/**
	 * Stops the bytes from the server to the node, on open and new connections, until
	 * {@link #heal()}: the server gets every request and acts on it, the node never hears
	 * back, as on a link that fails one way.
	 */
	void holdAnswers() {
		synchronized (this.gate) {
			this.answersHeld = true;
		}
	}

	void heal() {
		synchronized (this.gate) {
			this.cut = false;
			this.answersHeld = false;
			this.gate.notifyAll();
		}
	}

	/**
	 * Closes every open connection, as a reset would; new connections are accepted as
	 * before.
	 */
	void dropConnections() {
		for (Socket socket : this.sockets) {
			this.sockets.remove(socket);
			closeQuietly(socket);
		}
	}

	/** Delays every chunk by the given time in each direction; 0 for none. */
	void latency(long millis) {
		this.latencyMillis = millis;
	}

	@Override
	public void close() {
		this.closed = true;
		heal();
		try {
			this.server.close();
		}
		catch (IOException ex) {
			// Closing anyway.
		}
		this.sockets.forEach(TcpProxy::closeQuietly);
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
			awaitOpen();
			upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.upstreamPort), 2000);
			upstream.setTcpNoDelay(true);
			this.sockets.add(upstream);
			pump(client, upstream, false);
			pump(upstream, client, true);
		}
		catch (IOException | InterruptedException ex) {
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
					out.write(buffer, 0, read);
					out.flush();
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

	private void awaitOpen() throws InterruptedException {
		awaitOpen(false);
	}

	private void awaitOpen(boolean answers) throws InterruptedException {
		synchronized (this.gate) {
			while ((this.cut || (answers && this.answersHeld)) && !this.closed) {
				this.gate.wait();
			}
		}
	}

	private static void closeQuietly(Socket socket) {
		try {
			socket.close();
		}
		catch (IOException ex) {
			// Already closed.
		}
	}

}
