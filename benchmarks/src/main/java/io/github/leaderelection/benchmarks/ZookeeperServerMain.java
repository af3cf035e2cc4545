package io.github.leaderelection.benchmarks;

import java.io.File;
import java.nio.file.Files;

import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * A standalone ZooKeeper server (the real server code, through curator-test) in a JVM of
 * its own, so that its work does not mix with the coordinator's. Tick 500 ms and sessions
 * of 1 s to 60 s, so that both the short failover leases and the 15 s default fit. Prints
 * {@code @READY <port>}; stops when standard input closes.
 */
public final class ZookeeperServerMain {

	private ZookeeperServerMain() {
	}

	public static void main(String[] args) throws Exception {
		System.setProperty("zookeeper.4lw.commands.whitelist", "*");
		System.setProperty("zookeeper.admin.enableServer", "false");
		File dir = Files.createTempDirectory("bench-zookeeper").toFile();
		InstanceSpec spec = new InstanceSpec(dir, -1, -1, -1, true, 1, 500, 1000,
				java.util.Map.of("maxSessionTimeout", "60000"));
		try (TestingServer server = new TestingServer(spec, true)) {
			System.out.println("@READY " + server.getPort());
			System.out.flush();
			while (System.in.read() >= 0) {
				// wait for the coordinator to close our input
			}
		}
	}

}
