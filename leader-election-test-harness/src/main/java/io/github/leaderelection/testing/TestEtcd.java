package io.github.leaderelection.testing;

import java.nio.file.Path;
import java.util.List;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * The etcd that a test class elects through, found as the other stores' servers are: the
 * client URL in {@value #URL_VARIABLE}, else a Testcontainers container when Docker is
 * available, else an {@code etcd} process of the test's own (Debian package
 * {@code etcd-server}), whose absence fails the test with how to install it. Tests use a
 * namespace of their own on it. Failure tests, which kill and restart members, always run
 * processes of their own ({@link EtcdServer}, {@link EtcdCluster}).
 */
public final class TestEtcd implements AutoCloseable {

	public static final String URL_VARIABLE = "LEADER_ELECTION_TEST_ETCD_URL";

	/** etcd's own image, the version Kubernetes runs these years. */
	private static final String IMAGE = "gcr.io/etcd-development/etcd:v3.5.17";

	private final String endpoint;

	private final AutoCloseable server;

	private TestEtcd(String endpoint, AutoCloseable server) {
		this.endpoint = endpoint;
		this.server = server;
	}

	/**
	 * Finds or starts an etcd.
	 * @param directory where a process of the test's own keeps its data
	 */
	public static TestEtcd start(Path directory) throws Exception {
		String url = System.getenv(URL_VARIABLE);
		if (url != null && !url.isBlank()) {
			return new TestEtcd(url.trim(), () -> {
			});
		}
		if (DockerClientFactory.instance().isDockerAvailable()) {
			GenericContainer<?> container = new GenericContainer<>(DockerImageName.parse(IMAGE))
				.withCommand("etcd", "--listen-client-urls", "http://0.0.0.0:2379", "--advertise-client-urls",
						"http://0.0.0.0:2379", "--heartbeat-interval", "20", "--election-timeout", "200")
				.withExposedPorts(2379)
				.waitingFor(Wait.forHttp("/health").forPort(2379));
			container.start();
			return new TestEtcd("http://" + container.getHost() + ":" + container.getMappedPort(2379), container::stop);
		}
		EtcdServer server = new EtcdServer(directory);
		server.start();
		return new TestEtcd(server.endpoint(), server);
	}

	/** The client URL. */
	public String endpoint() {
		return this.endpoint;
	}

	/** The client URL, as a list. */
	public List<String> endpoints() {
		return List.of(this.endpoint);
	}

	@Override
	public void close() throws Exception {
		this.server.close();
	}

}
