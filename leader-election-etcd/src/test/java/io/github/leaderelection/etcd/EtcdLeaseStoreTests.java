package io.github.leaderelection.etcd;

import java.nio.file.Path;
import java.util.UUID;

import io.etcd.jetcd.Client;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.test.store.LeaseStoreContractTests;
import io.github.leaderelection.testing.TestEtcd;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Contract tests for {@link EtcdLeaseStore} on an etcd member of the test's own. Each
 * store stands for another node: each has a client of its own, and its own memory of seen
 * terms.
 */
class EtcdLeaseStoreTests extends LeaseStoreContractTests {

	/**
	 * A namespace per run: an etcd given by the environment may hold earlier runs' keys.
	 */
	private static final String RUN = UUID.randomUUID().toString().substring(0, 8);

	private static TestEtcd etcd;

	private static Client client;

	@BeforeAll
	static void startEtcd() throws Exception {
		etcd = TestEtcd.start(Path.of("target/etcd/contract"));
		client = Client.builder().endpoints(etcd.endpoint()).build();
	}

	@AfterAll
	static void stopEtcd() throws Exception {
		if (client != null) {
			client.close();
		}
		if (etcd != null) {
			etcd.close();
		}
	}

	@Override
	protected LeaseStore createStore() {
		return new EtcdLeaseStore(client, "contract-tests-" + RUN);
	}

	@Override
	protected LeaseStore createStoreWithIdentifier(String unsafeIdentifier) {
		return new EtcdLeaseStore(client, unsafeIdentifier);
	}

}
