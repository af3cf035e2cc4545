package io.github.leaderelection.testing;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/**
 * An etcd member of a test's own (the Debian package {@code etcd-server}), a cluster of
 * one, with its data under the test's directory. Its Raft timing is fast (heartbeat 20
 * ms, election 200 ms), so that etcd accepts leases of one second: with the default
 * timing it raises every TTL to at least 2 s.
 */
public final class EtcdServer extends StoreServer {

	private final String etcd;

	private final int peerPort;

	public EtcdServer(Path directory) throws Exception {
		super(directory);
		this.etcd = require("the etcd server", "etcd-server", "/usr/bin/etcd", "/usr/local/bin/etcd");
		this.peerPort = freePort();
	}

	@Override
	public void start() throws Exception {
		restart();
	}

	@Override
	public void restart() throws Exception {
		String peer = "http://127.0.0.1:" + this.peerPort;
		launch(List.of(this.etcd, "--name", "member", "--data-dir", this.directory.resolve("data").toString(),
				"--listen-client-urls", endpoint(), "--advertise-client-urls", endpoint(), "--listen-peer-urls", peer,
				"--initial-advertise-peer-urls", peer, "--initial-cluster", "member=" + peer, "--heartbeat-interval",
				"20", "--election-timeout", "200"), "etcd.log");
		awaitReady("etcd on port " + this.port);
	}

	/** The client URL, as jetcd takes it. */
	public String endpoint() {
		return "http://127.0.0.1:" + this.port;
	}

	@Override
	public boolean answers() {
		try {
			HttpURLConnection connection = (HttpURLConnection) URI.create(endpoint() + "/health")
				.toURL()
				.openConnection();
			connection.setConnectTimeout(500);
			connection.setReadTimeout(500);
			try (InputStream in = connection.getInputStream()) {
				return new String(in.readAllBytes(), StandardCharsets.UTF_8).contains("\"health\":\"true\"");
			}
			finally {
				connection.disconnect();
			}
		}
		catch (IOException ex) {
			return false;
		}
	}

}
