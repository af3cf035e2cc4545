package io.github.leaderelection.etcd;

import java.nio.file.Path;

import io.etcd.jetcd.Client;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.test.store.LeaseStoreContractTests;
import io.github.leaderelection.testing.EtcdServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Contract tests for {@link EtcdLeaseStore} on an etcd member of the test's own. Each
 * store stands for another node: each has a client of its own, and its own memory of seen
 * terms.
 */
class EtcdLeaseStoreTests extends LeaseStoreContractTests {

	private static EtcdServer server;

	private static Client client;

	@BeforeAll
	static void startEtcd() throws Exception {
		server = new EtcdServer(Path.of("target/etcd/contract"));
		server.start();
		client = Client.builder().endpoints(server.endpoint()).build();
	}

	@AfterAll
	static void stopEtcd() throws Exception {
		if (client != null) {
			client.close();
		}
		if (server != null) {
			server.close();
		}
	}

	@Override
	protected LeaseStore createStore() {
		return new EtcdLeaseStore(client, "contract-tests");
	}

	@Override
	protected LeaseStore createStoreWithIdentifier(String unsafeIdentifier) {
		return new EtcdLeaseStore(client, unsafeIdentifier);
	}

}
