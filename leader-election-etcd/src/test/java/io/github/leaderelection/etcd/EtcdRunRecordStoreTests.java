package io.github.leaderelection.etcd;

import java.nio.file.Path;
import java.util.UUID;

import io.etcd.jetcd.Client;
import io.github.leaderelection.test.store.RunRecordStoreContractTests;
import io.github.leaderelection.testing.TestEtcd;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;

/**
 * Run record contract tests for {@link EtcdLeaseStore}, on an etcd of their own.
 */
@Order(3)
class EtcdRunRecordStoreTests extends RunRecordStoreContractTests {

	private static final String NAMESPACE = "run-tests-" + UUID.randomUUID().toString().substring(0, 8);

	private static TestEtcd etcd;

	private static Client client;

	@BeforeAll
	static void startEtcd() throws Exception {
		etcd = TestEtcd.start(Path.of("target/etcd/runs"));
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
	protected EtcdLeaseStore createStore() {
		return new EtcdLeaseStore(client, NAMESPACE);
	}

}
