package io.github.leaderelection.etcd;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.spi.KeyedLocks;

/**
 * The list of live candidates that balancing reads: a key per candidate,
 * {@code <namespace>/candidates/<candidate>}, whose value is its weight, attached to an
 * etcd lease of the candidate's own whose TTL is the entry's time to live (in whole
 * seconds, rounded up; etcd raises it to its minimum, 2 s with its default timing). etcd
 * deletes the key when the lease runs out, so an entry lasts by etcd's clock alone. The
 * store remembers, per candidate it announced, the etcd lease and the TTL it was granted
 * for: the lease is etcd's, only its id is kept here.
 */
final class EtcdCandidates {

	private static final GetOption PREFIX = GetOption.builder().isPrefix(true).build();

	private final KV kv;

	private final EtcdLeases leases;

	/** The first part of every candidate's key, ending in a slash. */
	private final String prefix;

	private final ByteSequence listKey;

	/** The etcd lease behind each candidate this store announced. */
	private final KeyedLocks<Announced> announced = new KeyedLocks<>(Announced::new);

	EtcdCandidates(KV kv, EtcdLeases leases, String namespace) {
		this.kv = kv;
		this.leases = leases;
		this.prefix = namespace + "/candidates/";
		this.listKey = EtcdLeaseStore.bytes(this.prefix);
	}

	/**
	 * Refreshes the candidate's etcd lease and reads the list: a keep-alive and a range
	 * read, sent at once (one round trip), since etcd refreshes a lease only through a
	 * keep-alive of its own and lists keys only through a range. The read may be answered
	 * before the refresh: it still sees this candidate, whose lease was alive until the
	 * refresh (etcd refuses to refresh a lease that ran out). A lease that ran out, a
	 * first call and a new TTL take a new lease (the old one is revoked once the key has
	 * moved to the new one); an entry that another store removed, or that has another
	 * weight, is written again. Either way the write and the read are one transaction, so
	 * the answer includes the entry as written.
	 */
	Map<String, Integer> keepAlive(String candidateId, int weight, Duration ttl, Duration timeout) {
		EtcdCall call = EtcdCall.ofCandidate("keep alive", candidateId, timeout);
		long seconds = EtcdLeaseStore.ttlSeconds(ttl);
		return this.announced.withLock(candidateId, (candidate) -> {
			// A lease of another TTL is replaced, and revoked once the key has left it.
			long replaced = (candidate.ttlSeconds != seconds) ? candidate.leaseId : 0;
			GetResponse list = null;
			if (candidate.leaseId != 0 && replaced == 0) {
				CompletableFuture<Long> refreshed = this.leases.keepAlive(candidate.leaseId);
				CompletableFuture<GetResponse> read = this.kv.get(this.listKey, PREFIX);
				if (call.await(refreshed) > 0) {
					list = call.await(read);
				}
				else {
					candidate.leaseId = 0;
				}
			}
			if (candidate.leaseId == 0 || replaced != 0) {
				// Remembered before the key is written: should that write fail, the
				// next call keeps this lease alive and writes the key.
				candidate.leaseId = call.await(this.leases.grant(seconds));
				candidate.ttlSeconds = seconds;
			}
			if (list == null || !hasEntry(list, candidateId, weight, candidate.leaseId)) {
				list = call
					.await(this.kv.txn()
						.Then(Op.put(key(candidateId), weight(weight),
								PutOption.builder().withLeaseId(candidate.leaseId).build()),
								Op.get(this.listKey, PREFIX))
						.commit())
					.getGetResponses()
					.get(0);
			}
			this.leases.revokeQuietly(replaced);
			return candidates(list);
		});
	}

	/**
	 * Revokes the candidate's etcd lease, which takes its key with it. A store that holds
	 * no lease for it (it never announced it, or the lease ran out) deletes the key: a
	 * candidate may be taken off the list from anywhere.
	 */
	void remove(String candidateId, Duration timeout) {
		EtcdCall call = EtcdCall.ofCandidate("remove", candidateId, timeout);
		boolean revoked = this.announced.withLockIfUsed(candidateId, (candidate) -> {
			long leaseId = candidate.leaseId;
			candidate.leaseId = 0;
			return leaseId != 0 && call.await(this.leases.revoke(leaseId));
		}).orElse(false);
		if (!revoked) {
			call.await(this.kv.delete(key(candidateId)));
		}
	}

	private boolean hasEntry(GetResponse list, String candidateId, int weight, long leaseId) {
		ByteSequence key = key(candidateId);
		return list.getKvs()
			.stream()
			.anyMatch((entry) -> entry.getKey().equals(key) && entry.getLease() == leaseId
					&& entry.getValue().equals(weight(weight)));
	}

	/**
	 * The candidates of a read of the prefix. A key with a slash after the prefix is not
	 * a candidate's (names are URL-encoded): it belongs to a namespace nested in this
	 * one.
	 */
	private Map<String, Integer> candidates(GetResponse list) {
		Map<String, Integer> live = new TreeMap<>();
		for (KeyValue entry : list.getKvs()) {
			String name = entry.getKey().toString(StandardCharsets.UTF_8).substring(this.prefix.length());
			if (name.contains("/")) {
				continue;
			}
			String value = entry.getValue().toString(StandardCharsets.UTF_8);
			try {
				live.put(URLDecoder.decode(name, StandardCharsets.UTF_8), Integer.parseInt(value));
			}
			catch (IllegalArgumentException ex) {
				throw new LeaderElectionException("Unreadable candidate entry in etcd at " + this.prefix + name
						+ ": it was not written by this store", ex);
			}
		}
		return live;
	}

	private ByteSequence key(String candidateId) {
		return EtcdLeaseStore.bytes(this.prefix + EtcdLeaseStore.encode(candidateId));
	}

	private static ByteSequence weight(int weight) {
		return EtcdLeaseStore.bytes(Integer.toString(weight));
	}

	/** The etcd lease behind a candidate's entry; 0 when none is known. */
	private static final class Announced {

		long leaseId;

		long ttlSeconds;

	}

}
