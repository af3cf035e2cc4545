package io.github.leaderelection.zookeeper;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.time.Duration;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A TCP proxy between one ZooKeeper client and one server, to cut, black-hole or flap
 * that client's connection without touching the others (the kernel here has no netem).
 */
final class TcpProxy implements Closeable {

	private enum Mode {

		FORWARD, BLACKHOLE, REFUSE

	}

	private final int upstreamPort;

	private final ServerSocket listener;

	private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();

	private final ExecutorService threads = Executors.newCachedThreadPool((runnable) -> {
		Thread thread = new Thread(runnable, "tcp-proxy");
		thread.setDaemon(true);
		return thread;
	});

	private volatile Mode mode = Mode.FORWARD;

	private volatile long latencyMillis;

	TcpProxy(int upstreamPort) throws IOException {
		this.upstreamPort = upstreamPort;
		this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		this.threads.execute(this::accept);
	}

	String connectString() {
		return "127.0.0.1:" + this.listener.getLocalPort();
	}

	int upstreamPort() {
		return this.upstreamPort;
	}

	/**
	 * Passes bytes again, on fresh connections (a black-holed stream is no longer
	 * framed).
	 */
	void heal() {
		this.mode = Mode.FORWARD;
		dropConnections();
	}

	/**
	 * Swallows every byte, as a network partition would: both ends wait until they time
	 * out.
	 */
	void blackhole() {
		this.mode = Mode.BLACKHOLE;
	}

	/**
	 * Holds every chunk of bytes this long, each way, as a slow or congested link would;
	 * 0 for none.
	 */
	void latency(Duration latency) {
		this.latencyMillis = latency.toMillis();
	}

	/** Closes the connections and refuses new ones, as a crashed server would. */
	void cut() {
		this.mode = Mode.REFUSE;
		dropConnections();
	}

	/** Closes the connections; the client connects again at once. */
	void dropConnections() {
		for (Socket socket : this.sockets) {
			this.sockets.remove(socket);
			closeQuietly(socket);
		}
	}

	private void accept() {
		while (!this.listener.isClosed()) {
			try {
				Socket client = this.listener.accept();
				if (this.mode == Mode.REFUSE) {
					closeQuietly(client);
					continue;
				}
				Socket upstream;
				try {
					upstream = new Socket(InetAddress.getLoopbackAddress(), this.upstreamPort);
				}
				catch (IOException ex) {
					closeQuietly(client);
					continue;
				}
				this.sockets.add(client);
				this.sockets.add(upstream);
				pump(client, upstream);
				pump(upstream, client);
			}
			catch (IOException ex) {
				// closed
			}
		}
	}

	private void pump(Socket from, Socket to) {
		this.threads.execute(() -> {
			byte[] buffer = new byte[8192];
			try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
				int read;
				while ((read = in.read(buffer)) >= 0) {
					long latency = this.latencyMillis;
					if (latency > 0) {
						Thread.sleep(latency);
					}
					if (this.mode == Mode.FORWARD) {
						out.write(buffer, 0, read);
						out.flush();
					}
				}
			}
			catch (IOException ex) {
				// one side closed
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			finally {
				closeQuietly(from);
				closeQuietly(to);
			}
		});
	}

	@Override
	public void close() {
		closeQuietly(this.listener);
		dropConnections();
		this.threads.shutdownNow();
	}

	private static void closeQuietly(Closeable closeable) {
		try {
			closeable.close();
		}
		catch (IOException ex) {
			// nothing to do
		}
	}

}
