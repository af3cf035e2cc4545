package io.github.leaderelection.etcd;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.etcd.GroupWatches.GroupKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the keys of many groups at once (each group's record and lease key), in the
 * fewest requests: up to {@value #SCAN_ABOVE} groups, a range read of each group's keys,
 * in read-only transactions of {@value EtcdCall#MAX_TXN_OPS}; above, every group's keys
 * in the namespace, in pages of up to {@value #PAGE_KEYS} keys read at one revision, so
 * that a batch of 10,000 groups costs two requests rather than 79 transactions. A page
 * larger than the client accepts (gRPC's 4 MB by default; long group or candidate names)
 * is read again in halves, and later pages keep the smaller size.
 */
final class GroupKeyReads {

	private static final Logger logger = LoggerFactory.getLogger(GroupKeyReads.class);

	/**
	 * Above this many groups (four transactions) a batch reads the namespace instead,
	 * which costs fewer requests even when the namespace also holds other instances'
	 * groups.
	 */
	static final int SCAN_ABOVE = 4 * EtcdCall.MAX_TXN_OPS;

	/**
	 * Keys per page at first: 16,384 groups, about 3 MB with group names of 10 characters
	 * (a page too large for the client is halved).
	 */
	static final int PAGE_KEYS = 32768;

	/** The smallest page: an answer too large at this size is not the page's fault. */
	private static final int MIN_PAGE_KEYS = 256;

	private static final GetOption PREFIX = GetOption.builder().isPrefix(true).build();

	private final KV kv;

	private final String namespace;

	private final String prefix;

	private final ByteSequence start;

	private final ByteSequence end;

	/** Keys per page: halved when an answer was larger than the client accepts. */
	private volatile int pageKeys = PAGE_KEYS;

	/**
	 * @param kv the client's key-value service
	 * @param namespace the store's namespace, whose groups' keys lie under
	 * {@code <namespace>/groups/}
	 */
	GroupKeyReads(KV kv, String namespace) {
		this.kv = kv;
		this.namespace = namespace;
		this.prefix = namespace + "/groups/";
		this.start = EtcdLeaseStore.bytes(this.prefix);
		// The first key after every key under the prefix: '0' follows '/'.
		this.end = EtcdLeaseStore.bytes(namespace + "/groups0");
	}

	/** Each group's keys, in the order asked, an empty list for a group that has none. */
	Map<String, List<KeyValue>> read(EtcdCall call, List<String> groups) {
		Map<String, List<KeyValue>> keys = new LinkedHashMap<>();
		if (groups.size() > SCAN_ABOVE) {
			Map<String, List<KeyValue>> scanned = scan(call);
			groups.forEach((group) -> keys.put(group, scanned.getOrDefault(group, List.of())));
			return keys;
		}
		List<GetResponse> responses = call.read(this.kv,
				groups.stream()
					.map((group) -> Op.get(EtcdLeaseStore.groupPrefix(this.namespace, group), PREFIX))
					.toList());
		for (int i = 0; i < groups.size(); i++) {
			keys.put(groups.get(i), responses.get(i).getKvs());
		}
		return keys;
	}

	/**
	 * Every group's keys in the namespace, page after page at the first page's revision,
	 * so that no group is seen half before and half after a write.
	 */
	private Map<String, List<KeyValue>> scan(EtcdCall call) {
		Map<String, List<KeyValue>> byGroup = new HashMap<>();
		ByteSequence from = this.start;
		long revision = 0;
		while (true) {
			int limit = this.pageKeys;
			GetOption.Builder page = GetOption.builder().withRange(this.end).withLimit(limit);
			if (revision > 0) {
				page.withRevision(revision);
			}
			GetResponse response;
			try {
				response = call.await(this.kv.get(from, page.build()));
			}
			catch (LeaderElectionException ex) {
				if (!tooLarge(ex) || limit <= MIN_PAGE_KEYS) {
					throw ex;
				}
				this.pageKeys = limit / 2;
				logger.debug("A page of {} keys was larger than the etcd client accepts; reading {} at a time", limit,
						limit / 2);
				continue;
			}
			if (revision == 0) {
				revision = response.getHeader().getRevision();
			}
			List<KeyValue> found = response.getKvs();
			for (KeyValue keyValue : found) {
				GroupKey key = GroupWatches.groupKey(this.prefix, keyValue.getKey());
				if (key != null) {
					byGroup.computeIfAbsent(key.group(), (group) -> new ArrayList<>(2)).add(keyValue);
				}
			}
			if (!response.isMore() || found.isEmpty()) {
				return byGroup;
			}
			from = found.get(found.size() - 1).getKey().concat(ByteSequence.from(new byte[] { 0 }));
		}
	}

	/** Whether the failure is an answer larger than the client accepts. */
	private static boolean tooLarge(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof EtcdException etcd && etcd.getErrorCode() == ErrorCode.RESOURCE_EXHAUSTED) {
				return true;
			}
			if (String.valueOf(cause.getMessage()).contains("RESOURCE_EXHAUSTED")) {
				return true;
			}
		}
		return false;
	}

	@Override
	public String toString() {
		return "reads of the groups under " + this.start.toString(StandardCharsets.UTF_8);
	}

}
