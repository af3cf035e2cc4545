package io.github.leaderelection.zookeeper;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A loopback TCP proxy in front of a ZooKeeper server that counts the packets its clients
 * send: every ZooKeeper packet (connect, request, ping) is a 4-byte length and that many
 * bytes, so the count is the number of requests the server received from this node.
 */
final class RequestCountingProxy implements AutoCloseable {

	private final ServerSocket server;

	private final int upstreamPort;

	private final AtomicLong packets = new AtomicLong();

	private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();

	RequestCountingProxy(int upstreamPort) throws IOException {
		this.upstreamPort = upstreamPort;
		this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		start("accept", this::accept);
	}

	String connectString() {
		return "127.0.0.1:" + this.server.getLocalPort();
	}

	/** The packets sent by clients so far. */
	long packets() {
		return this.packets.get();
	}

	@Override
	public void close() {
		try {
			this.server.close();
		}
		catch (IOException ex) {
			// closing anyway
		}
		for (Socket socket : this.sockets) {
			try {
				socket.close();
			}
			catch (IOException ex) {
				// closing anyway
			}
		}
	}

	private void accept() {
		while (!this.server.isClosed()) {
			try {
				Socket client = this.server.accept();
				Socket upstream = new Socket(InetAddress.getLoopbackAddress(), this.upstreamPort);
				// As ZooKeeper's own sockets: a small packet leaves at once.
				client.setTcpNoDelay(true);
				upstream.setTcpNoDelay(true);
				this.sockets.add(client);
				this.sockets.add(upstream);
				start("requests", () -> pipe(client, upstream, true));
				start("answers", () -> pipe(upstream, client, false));
			}
			catch (IOException ex) {
				// closed, or the server is gone: the client connects again
			}
		}
	}

	private void pipe(Socket from, Socket to, boolean count) {
		byte[] buffer = new byte[64 * 1024];
		// Where the stream stands: reading a length (lengthBytes of 4 read) or skipping
		// a packet's body (bodyLeft bytes to go).
		int lengthBytes = 0;
		int length = 0;
		long bodyLeft = 0;
		try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
			for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
				for (int i = 0; count && i < read;) {
					if (bodyLeft > 0) {
						int skipped = (int) Math.min(bodyLeft, read - i);
						bodyLeft -= skipped;
						i += skipped;
						continue;
					}
					length = (length << 8) | (buffer[i++] & 0xff);
					if (++lengthBytes == 4) {
						this.packets.incrementAndGet();
						bodyLeft = length;
						lengthBytes = 0;
						length = 0;
					}
				}
				out.write(buffer, 0, read);
				out.flush();
			}
		}
		catch (IOException ex) {
			// one side closed
		}
		finally {
			try {
				from.close();
				to.close();
			}
			catch (IOException ex) {
				// closing anyway
			}
		}
	}

	private static void start(String name, Runnable work) {
		Thread thread = new Thread(work, "counting-proxy-" + name);
		thread.setDaemon(true);
		thread.start();
	}

}
