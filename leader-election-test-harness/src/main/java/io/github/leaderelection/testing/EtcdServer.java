package io.github.leaderelection.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * An etcd member of a test's own (the Debian package {@code etcd-server}), with its data
 * under the test's directory: a cluster of one, or a member of an {@link EtcdCluster}.
 * Its Raft timing is fast (heartbeat 20 ms, election 200 ms), so that etcd accepts leases
 * of one second: with the default timing it raises every TTL to at least 2 s.
 */
public final class EtcdServer extends StoreServer {

	private static final Pattern MEMBER_ID = Pattern.compile("\"member_id\":\"(\\d+)\"");

	private static final Pattern LEADER = Pattern.compile("\"leader\":\"(\\d+)\"");

	private final String etcd;

	private final String name;

	private final int peerPort;

	private String initialCluster;

	private String clusterState = "new";

	/** etcd's {@code --max-txn-ops}, or 0 for its default of 128. */
	private int maxTxnOps;

	/** A cluster of one. */
	public EtcdServer(Path directory) throws Exception {
		this(directory, "member");
	}

	EtcdServer(Path directory, String name) throws Exception {
		super(directory);
		this.etcd = require("the etcd server", "etcd-server", "/usr/bin/etcd", "/usr/local/bin/etcd");
		this.name = name;
		this.peerPort = freePort();
		this.initialCluster = name + "=" + peerUrl();
	}

	String name() {
		return this.name;
	}

	/**
	 * Lets a transaction hold more operations than etcd's default of 128, for a test that
	 * writes many keys at once as something other than the store (the stores' own batches
	 * stay within the default).
	 * @return this server, not started yet
	 */
	public EtcdServer maxTxnOps(int operations) {
		this.maxTxnOps = operations;
		return this;
	}

	String peerUrl() {
		return "http://127.0.0.1:" + this.peerPort;
	}

	void initialCluster(String initialCluster, String state) {
		this.initialCluster = initialCluster;
		this.clusterState = state;
	}

	@Override
	public void start() throws Exception {
		restart();
	}

	@Override
	public void restart() throws Exception {
		launch();
		awaitReady("etcd on port " + this.port);
	}

	/**
	 * Starts the process without waiting: a cluster's members answer once a quorum runs.
	 */
	void launch() throws IOException {
		List<String> command = new ArrayList<>(List.of(this.etcd, "--name", this.name, "--data-dir",
				dataDirectory().toString(), "--listen-client-urls", endpoint(), "--advertise-client-urls", endpoint(),
				"--listen-peer-urls", peerUrl(), "--initial-advertise-peer-urls", peerUrl(), "--initial-cluster",
				this.initialCluster, "--initial-cluster-state", this.clusterState, "--initial-cluster-token",
				"leader-election-tests", "--heartbeat-interval", "20", "--election-timeout", "200"));
		if (this.maxTxnOps > 0) {
			command.addAll(List.of("--max-txn-ops", Integer.toString(this.maxTxnOps)));
		}
		launch(command, "etcd.log");
	}

	void awaitReady() throws InterruptedException {
		awaitReady("etcd member " + this.name + " on port " + this.port);
	}

	/**
	 * Starts again on an empty data directory: a cluster of one starts from nothing, as
	 * after a lost disk.
	 */
	public void restartWiped() throws Exception {
		wipe();
		restart();
	}

	void wipe() throws IOException {
		Path data = dataDirectory();
		if (Files.exists(data)) {
			try (Stream<Path> files = Files.walk(data)) {
				for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
					Files.deleteIfExists(file);
				}
			}
		}
	}

	private Path dataDirectory() {
		return this.directory.resolve("data").toAbsolutePath();
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

	/**
	 * Whether this member is the Raft leader of its cluster, as its status says (through
	 * etcd's HTTP gateway).
	 */
	public boolean isRaftLeader() {
		try {
			String status = post("/v3/maintenance/status", "{}");
			Matcher member = MEMBER_ID.matcher(status);
			Matcher leader = LEADER.matcher(status);
			return member.find() && leader.find() && member.group(1).equals(leader.group(1));
		}
		catch (IOException ex) {
			return false;
		}
	}

	/** The id of the member with a peer URL, as this member's member list says. */
	String memberId(String peerUrl) throws IOException {
		String members = post("/v3/cluster/member/list", "{}");
		Matcher member = Pattern.compile("\\{\"ID\":\"(\\d+)\"[^}]*\"peerURLs\":\\[\"" + Pattern.quote(peerUrl))
			.matcher(members);
		if (!member.find()) {
			throw new IllegalStateException("No member with peer URL " + peerUrl + " in " + members);
		}
		return member.group(1);
	}

	/** A call to etcd's HTTP gateway: a JSON body in, a JSON body out. */
	String post(String path, String body) throws IOException {
		HttpURLConnection connection = (HttpURLConnection) URI.create(endpoint() + path).toURL().openConnection();
		connection.setConnectTimeout(1000);
		connection.setReadTimeout(5000);
		connection.setRequestMethod("POST");
		connection.setDoOutput(true);
		try (OutputStream out = connection.getOutputStream()) {
			out.write(body.getBytes(StandardCharsets.UTF_8));
		}
		try (InputStream in = connection.getInputStream()) {
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		finally {
			connection.disconnect();
		}
	}

}
