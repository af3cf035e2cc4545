package io.github.leaderelection.etcd;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.DeleteOption;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.test.store.LostStoreDataContractTests;
import io.github.leaderelection.testing.TestEtcd;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lost record in etcd: keys deleted, older values put back and terms lowered with plain
 * key-value calls, as an operator or a restore from an older snapshot would.
 */
@Order(3)
class EtcdLostStoreDataTests extends LostStoreDataContractTests {

	private static final String NAMESPACE = "lost-tests-" + UUID.randomUUID().toString().substring(0, 8);

	private static TestEtcd etcd;

	private static Client client;

	@BeforeAll
	static void startEtcd() throws Exception {
		etcd = TestEtcd.start(Path.of("target/etcd/lost"));
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

	@Override
	protected void delete(List<String> groups) {
		for (String group : groups) {
			try {
				client.getKVClient()
					.delete(key(group, ""), DeleteOption.builder().isPrefix(true).build())
					.get(5, TimeUnit.SECONDS);
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		}
	}

	@Override
	protected Object copy(String group) {
		return record(group);
	}

	@Override
	protected void restore(String group, Object copy) {
		put(group, (String) copy);
	}

	@Override
	protected void setTerm(String group, long term) {
		String record = record(group);
		put(group, term + record.substring(record.indexOf(' ')));
	}

	@Override
	protected void setHolder(String group, String holder) {
		String[] fields = record(group).split(" ");
		fields[4] = holder;
		put(group, String.join(" ", fields));
	}

	/**
	 * Only the lease key deleted, while its holder's etcd lease lives (a restore that
	 * could not bring that lease back does this): the record still names the holder in
	 * the term everyone saw, so only the holder's etcd lease tells that it may believe.
	 */
	@Test
	void leaseKeyDeletedWhileItsHolderLivesIsTakenOnlyOnceTheHolderCannotBelieve() throws Exception {
		EtcdLeaseStore holder = createStore();
		EtcdLeaseStore other = createStore();
		String group = "lost-key-" + UUID.randomUUID().toString().substring(0, 8);
		Lease held = holder.tryAcquire(group, "a", LEASE, TIMEOUT).orElseThrow();
		assertThat(other.read(group, TIMEOUT).orElseThrow().term()).isEqualTo(held.term());
		client.getKVClient().delete(key(group, "lease")).get(5, TimeUnit.SECONDS);
		Lease taken = other.tryAcquire(group, "b", LEASE, TIMEOUT).orElseThrow();
		assertThat(taken.term()).isGreaterThan(held.term());
		assertThat(taken.activeIn()).isGreaterThan(LEASE.minusSeconds(3));
	}

	/**
	 * etcd tells no time, and terms follow the instances' clocks. One whose clock is an
	 * hour behind the others' has read their terms in other groups: a group it takes
	 * after the group's record was lost, which it never read, gets a term above them all
	 * the same, so no term goes back.
	 */
	@Test
	void anInstanceWhoseClockIsBehindGrantsAboveTheTermsItReadInOtherGroups() throws Exception {
		EtcdLeaseStore ahead = createStore();
		EtcdLeaseStore behind = createStore();
		String read = "read-" + UUID.randomUUID().toString().substring(0, 8);
		String lost = "lost-" + UUID.randomUUID().toString().substring(0, 8);
		Lease other = ahead.tryAcquire(read, "a", LEASE, TIMEOUT).orElseThrow();
		long hourAhead = other.term() + TimeUnit.HOURS.toMicros(1);
		setTerm(read, hourAhead);
		assertThat(behind.read(read, TIMEOUT).orElseThrow().term()).isEqualTo(hourAhead);
		Lease lostLease = ahead.tryAcquire(lost, "a", LEASE, TIMEOUT).orElseThrow();
		delete(List.of(lost));
		Lease taken = behind.tryAcquire(lost, "b", LEASE, TIMEOUT).orElseThrow();
		assertThat(taken.term()).isGreaterThan(hourAhead).isGreaterThan(lostLease.term());
	}

	private static String record(String group) {
		try {
			return client.getKVClient()
				.get(key(group, "record"))
				.get(5, TimeUnit.SECONDS)
				.getKvs()
				.get(0)
				.getValue()
				.toString(StandardCharsets.UTF_8);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static void put(String group, String record) {
		try {
			client.getKVClient().put(key(group, "record"), EtcdLeaseStore.bytes(record)).get(5, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static ByteSequence key(String group, String name) {
		return EtcdLeaseStore.bytes(NAMESPACE + "/groups/" + EtcdLeaseStore.encode(group) + "/" + name);
	}

}
