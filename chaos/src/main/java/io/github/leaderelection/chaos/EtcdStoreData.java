package io.github.leaderelection.chaos;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;

/**
 * The election's keys in etcd, under the nodes' namespace {@value #NAMESPACE}: per group
 * {@code groups/<group>/record} ({@code term leaseId fenceId leaseHolder holder}, never
 * deleted by the store; see {@code GroupRecord}) and {@code groups/<group>/lease},
 * attached to its holder's etcd lease; the live candidates under {@code candidates/}.
 */
final class EtcdStoreData implements StoreData {

	/** The namespace the nodes give their store (see {@code ChaosNode}). */
	static final String NAMESPACE = "chaos";

	private static final ByteSequence PREFIX = bytes(NAMESPACE + "/");

	private static final long TIMEOUT_SECONDS = 5;

	private final String endpoint;

	private Client client;

	EtcdStoreData(String endpoint) {
		this.endpoint = endpoint;
	}

	@Override
	public Copy copy() throws Exception {
		GetResponse response = await(client().getKVClient().get(PREFIX, GetOption.builder().isPrefix(true).build()));
		List<Key> keys = new ArrayList<>();
		for (KeyValue kv : response.getKvs()) {
			keys.add(new Key(kv.getKey(), kv.getValue(), kv.getLease()));
		}
		return new Keys(keys);
	}

	/**
	 * Like restoring an old snapshot: in one transaction, the namespace holds the copy's
	 * keys and none written since. A key attached to an etcd lease that has ended since
	 * is not restored (etcd would refuse the whole transaction), as a key whose lease
	 * expired is gone. etcd refuses a transaction that deletes the namespace and puts a
	 * key in it, so each key of the moment that the copy lacks is deleted on its own.
	 */
	@Override
	public String restore(Copy copy) throws Exception {
		List<Key> keys = ((Keys) copy).keys();
		Map<Long, Boolean> liveLeases = new HashMap<>();
		Set<ByteSequence> restored = new HashSet<>();
		List<Op> operations = new ArrayList<>();
		for (Key key : keys) {
			if (key.lease() == 0) {
				operations.add(Op.put(key.name(), key.value(), PutOption.DEFAULT));
				restored.add(key.name());
			}
			else if (liveLeases.computeIfAbsent(key.lease(), this::isLive)) {
				operations.add(Op.put(key.name(), key.value(), PutOption.builder().withLeaseId(key.lease()).build()));
				restored.add(key.name());
			}
		}
		int deleted = 0;
		for (Key key : ((Keys) copy()).keys()) {
			if (!restored.contains(key.name())) {
				operations.add(Op.delete(key.name(), DeleteOption.DEFAULT));
				deleted++;
			}
		}
		await(client().getKVClient().txn().Then(operations.toArray(new Op[0])).commit());
		return "restored-" + restored.size() + "-of-" + keys.size() + "-keys-deleted-" + deleted;
	}

	private boolean isLive(long lease) {
		try {
			return await(client().getLeaseClient().timeToLive(lease, LeaseOption.DEFAULT)).getTTL() > 0;
		}
		catch (Exception ex) {
			return false;
		}
	}

	@Override
	public String deleteGroup(String group, boolean leaseToo) throws Exception {
		long deleted = await(client().getKVClient().delete(key(group, "record"))).getDeleted();
		if (leaseToo) {
			deleted += await(client().getKVClient().delete(key(group, "lease"))).getDeleted();
		}
		return "deleted-" + deleted + "-keys-of-" + group + (leaseToo ? "-record-and-lease" : "-record");
	}

	@Override
	public String wipe(boolean drastic) throws Exception {
		long deleted = await(client().getKVClient().delete(PREFIX, DeleteOption.builder().isPrefix(true).build()))
			.getDeleted();
		return "deleted-" + deleted + "-keys";
	}

	@Override
	public String lowerTerm(String group, long by) throws Exception {
		ByteSequence key = key(group, "record");
		GetResponse response = await(client().getKVClient().get(key));
		if (response.getKvs().isEmpty()) {
			return "no-record-of-" + group;
		}
		KeyValue record = response.getKvs().get(0);
		String[] fields = record.getValue().toString(StandardCharsets.UTF_8).split(" ", -1);
		long term = Long.parseLong(fields[0]);
		long lowered = Math.max(0, term - by);
		fields[0] = Long.toString(lowered);
		PutOption put = (record.getLease() != 0) ? PutOption.builder().withLeaseId(record.getLease()).build()
				: PutOption.DEFAULT;
		// Over the revision read: a grant in between keeps its term.
		TxnResponse written = await(client().getKVClient()
			.txn()
			.If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(record.getModRevision())))
			.Then(Op.put(key, bytes(String.join(" ", fields)), put))
			.commit());
		if (!written.isSucceeded()) {
			return "term-of-" + group + "-changed-meanwhile";
		}
		return "term-of-" + group + "-from-" + term + "-to-" + lowered;
	}

	/** A key of a group, as the store names it (the group names need no encoding). */
	private static ByteSequence key(String group, String suffix) {
		return bytes(NAMESPACE + "/groups/" + group + "/" + suffix);
	}

	private static ByteSequence bytes(String text) {
		return ByteSequence.from(text, StandardCharsets.UTF_8);
	}

	private static <T> T await(CompletableFuture<T> call) throws Exception {
		return call.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
	}

	/** One client for the run: it reconnects by itself after a restart of the server. */
	private Client client() {
		if (this.client == null) {
			this.client = Client.builder()
				.endpoints(this.endpoint)
				.connectTimeout(Duration.ofSeconds(2))
				.retryDelay(50)
				.retryMaxDelay(500)
				.build();
		}
		return this.client;
	}

	/** Starts the client on first use; it connects by itself from then on. */
	@Override
	public void connect() throws Exception {
		client();
	}

	@Override
	public void close() {
		if (this.client != null) {
			this.client.close();
		}
	}

	private record Key(ByteSequence name, ByteSequence value, long lease) {
	}

	private record Keys(List<Key> keys) implements Copy {

		@Override
		public int size() {
			return this.keys.size();
		}

	}

}
