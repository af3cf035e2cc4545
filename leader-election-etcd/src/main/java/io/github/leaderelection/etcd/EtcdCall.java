package io.github.leaderelection.etcd;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import io.etcd.jetcd.KV;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Op;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.spi.StoreCall;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One store operation's calls to etcd, all within its one timeout. */
final class EtcdCall {

	private static final Logger logger = LoggerFactory.getLogger(EtcdCall.class);

	/**
	 * etcd's default {@code --max-txn-ops}: it refuses a transaction of more operations.
	 */
	static final int MAX_TXN_OPS = 128;

	private final String operation;

	private final StoreCall call;

	EtcdCall(String operation, String group, Duration timeout) {
		this(operation, timeout, "group '" + group + "'");
	}

	private EtcdCall(String operation, Duration timeout, String subject) {
		this.operation = operation;
		this.call = StoreCall.start(operation + " " + subject, "in etcd", timeout);
	}

	/** An operation on a candidate's entry on the list of live candidates. */
	static EtcdCall ofCandidate(String operation, String candidateId, Duration timeout) {
		return new EtcdCall(operation, timeout, "candidate '" + candidateId + "'");
	}

	/** An operation on several groups at once, within one timeout. */
	static EtcdCall ofGroups(String operation, int groups, Duration timeout) {
		return new EtcdCall(operation, timeout, groups + " groups");
	}

	<T> T await(CompletableFuture<T> future) {
		return this.call.await(future);
	}

	/**
	 * Range reads in read-only transactions of at most {@value #MAX_TXN_OPS} operations,
	 * sent at once.
	 * @return their answers, in order
	 */
	List<GetResponse> read(KV kv, List<? extends Op> reads) {
		List<CompletableFuture<TxnResponse>> transactions = new ArrayList<>();
		for (int from = 0; from < reads.size(); from += MAX_TXN_OPS) {
			List<? extends Op> chunk = reads.subList(from, Math.min(reads.size(), from + MAX_TXN_OPS));
			transactions.add(kv.txn().Then(chunk.toArray(Op[]::new)).commit());
		}
		List<GetResponse> responses = new ArrayList<>();
		for (CompletableFuture<TxnResponse> transaction : transactions) {
			responses.addAll(await(transaction).getGetResponses());
		}
		return responses;
	}

	/**
	 * Waits for several groups' outcomes, each on its own, within the call's time.
	 * @return the groups whose outcome was {@code true}. One that failed is left out, and
	 * the failure is thrown only when no outcome was {@code true}, so that a store that
	 * stopped answering reads as an error rather than as so many answers "no".
	 */
	Set<String> awaitEach(Map<String, CompletableFuture<Boolean>> outcomes) {
		Set<String> succeeded = new LinkedHashSet<>();
		LeaderElectionException failure = null;
		for (Map.Entry<String, CompletableFuture<Boolean>> outcome : outcomes.entrySet()) {
			try {
				if (await(outcome.getValue())) {
					succeeded.add(outcome.getKey());
				}
			}
			catch (LeaderElectionException ex) {
				logger.debug("Could not {} group '{}' in etcd", this.operation, outcome.getKey(), ex);
				failure = (failure != null) ? failure : ex;
			}
		}
		if (succeeded.isEmpty() && failure != null) {
			throw failure;
		}
		return succeeded;
	}

	/**
	 * Sends the next request of a chain that runs without a waiting thread, unless the
	 * call's time is over: a chain whose caller gave up must not keep writing.
	 */
	<T> CompletableFuture<T> then(Supplier<CompletableFuture<T>> request) {
		if (this.call.isOver()) {
			return CompletableFuture.failedFuture(this.call.timedOut(null));
		}
		return request.get();
	}

}
