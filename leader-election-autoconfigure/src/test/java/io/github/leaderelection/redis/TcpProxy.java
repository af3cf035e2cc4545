package io.github.leaderelection.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP proxy that forwards to one port and can be switched to another, dropping
 * every open connection: what clients see when a virtual address moves to another Redis.
 */
final class TcpProxy implements AutoCloseable {

	private final ServerSocket server;

	private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();

	private volatile int target;

	private volatile boolean answersHeld;

	TcpProxy(int target) throws IOException {
		this.target = target;
		this.server = new ServerSocket(0);
		Thread acceptor = new Thread(this::accept, "tcp-proxy-" + this.server.getLocalPort());
		acceptor.setDaemon(true);
		acceptor.start();
	}

	int port() {
		return this.server.getLocalPort();
	}

	/**
	 * Stops Redis's answers from reaching the clients while requests still arrive, as on
	 * a link that fails one way; {@code false} lets them through again.
	 */
	void holdAnswers(boolean hold) {
		this.answersHeld = hold;
	}

	/** Forwards new connections to the given port and drops the open ones. */
	void switchTo(int port) {
		this.target = port;
		this.sockets.forEach(TcpProxy::closeQuietly);
		this.sockets.clear();
	}

	@Override
	public void close() {
		closeQuietly(this.server);
		switchTo(this.target);
	}

	private void accept() {
		while (!this.server.isClosed()) {
			Socket client;
			try {
				client = this.server.accept();
			}
			catch (IOException ex) {
				continue; // closed
			}
			try {
				Socket upstream = new Socket("127.0.0.1", this.target);
				this.sockets.add(client);
				this.sockets.add(upstream);
				pump(client, upstream, false);
				pump(upstream, client, true);
			}
			catch (IOException ex) {
				closeQuietly(client); // the target is down: the client sees the drop and
										// retries
			}
		}
	}

	private void pump(Socket from, Socket to, boolean answers) {
		Thread thread = new Thread(() -> {
			byte[] buffer = new byte[16384];
			try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
				int read;
				while ((read = in.read(buffer)) >= 0) {
					while (answers && this.answersHeld) {
						Thread.sleep(5);
					}
					out.write(buffer, 0, read);
					out.flush();
				}
			}
			catch (IOException ex) {
				// dropped
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			finally {
				closeQuietly(from);
				closeQuietly(to);
			}
		}, "tcp-proxy-pump");
		thread.setDaemon(true);
		thread.start();
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// already closed
		}
	}

}
