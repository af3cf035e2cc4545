package io.github.leaderelection.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The proxy's faults against an echo server: a cut stalls without resetting and delivers
 * late, a latency delays.
 */
class TcpProxyTests {

	private ServerSocket echo;

	private TcpProxy proxy;

	@BeforeEach
	void startEcho() throws IOException {
		this.echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		Thread server = new Thread(() -> {
			while (true) {
				try {
					Socket socket = this.echo.accept();
					Thread echoer = new Thread(() -> {
						try (socket) {
							socket.getInputStream().transferTo(socket.getOutputStream());
						}
						catch (IOException ex) {
							// closed
						}
					});
					echoer.setDaemon(true);
					echoer.start();
				}
				catch (IOException ex) {
					return;
				}
			}
		});
		server.setDaemon(true);
		server.start();
		this.proxy = new TcpProxy(this.echo.getLocalPort());
	}

	@AfterEach
	void stop() throws IOException {
		this.proxy.close();
		this.echo.close();
	}

	@Test
	void forwardsBothWays() throws IOException {
		try (Socket client = connect()) {
			assertThat(roundTrip(client, 'a')).isEqualTo('a');
		}
	}

	@Test
	void cutStallsOpenAndNewConnectionsWithoutResetAndHealDeliversWhatWasHeld() throws IOException {
		try (Socket open = connect()) {
			assertThat(roundTrip(open, 'a')).isEqualTo('a');
			this.proxy.cut();
			open.setSoTimeout(300);
			open.getOutputStream().write('b');
			assertThatExceptionOfType(SocketTimeoutException.class).isThrownBy(() -> open.getInputStream().read());
			try (Socket fresh = connect()) {
				fresh.setSoTimeout(300);
				fresh.getOutputStream().write('c');
				assertThatExceptionOfType(SocketTimeoutException.class).isThrownBy(() -> fresh.getInputStream().read());
				this.proxy.heal();
				fresh.setSoTimeout(5000);
				assertThat(fresh.getInputStream().read()).isEqualTo('c');
			}
			open.setSoTimeout(5000);
			assertThat(open.getInputStream().read()).isEqualTo('b');
		}
	}

	@Test
	void heldAnswersLetRequestsThroughButNoReplyUntilHealed() throws Exception {
		try (ServerSocket recorder = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
				TcpProxy oneWay = new TcpProxy(recorder.getLocalPort());
				Socket client = new Socket(InetAddress.getLoopbackAddress(), oneWay.port())) {
			oneWay.holdAnswers();
			client.getOutputStream().write('a');
			try (Socket server = recorder.accept()) {
				server.setSoTimeout(5000);
				assertThat(server.getInputStream().read()).as("the request arrives").isEqualTo('a');
				server.getOutputStream().write('b');
				client.setSoTimeout(300);
				assertThatExceptionOfType(SocketTimeoutException.class)
					.isThrownBy(() -> client.getInputStream().read());
				oneWay.heal();
				client.setSoTimeout(5000);
				assertThat(client.getInputStream().read()).isEqualTo('b');
			}
		}
	}

	@Test
	void latencyDelaysEachDirection() throws IOException {
		try (Socket client = connect()) {
			roundTrip(client, 'a');
			this.proxy.latency(java.time.Duration.ofMillis(150));
			long start = System.nanoTime();
			assertThat(roundTrip(client, 'b')).isEqualTo('b');
			assertThat((System.nanoTime() - start) / 1_000_000).isGreaterThanOrEqualTo(300);
		}
	}

	private Socket connect() throws IOException {
		Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.proxy.port());
		socket.setSoTimeout(5000);
		return socket;
	}

	private static int roundTrip(Socket socket, char value) throws IOException {
		OutputStream out = socket.getOutputStream();
		out.write(value);
		out.flush();
		InputStream in = socket.getInputStream();
		return in.read();
	}

}
