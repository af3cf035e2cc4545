package io.github.leaderelection.zookeeper;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.api.transaction.OperationType;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ZKConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Curator's background operations, each awaited until the caller's deadline at most: a
 * store call returns within its timeout whatever Curator's retry policy, and an answer
 * that comes later finds nobody waiting.
 */
final class CuratorCalls {

	private static final Logger logger = LoggerFactory.getLogger(CuratorCalls.class);

	private final CuratorFramework client;

	CuratorCalls(CuratorFramework client) {
		this.client = client;
	}

	CuratorFramework client() {
		return this.client;
	}

	/** The node's data and stat, or an event with result NONODE. */
	CuratorEvent getData(String path, long deadline) throws Exception {
		return call(deadline, (callback) -> this.client.getData().inBackground(callback).forPath(path), Code.OK,
				Code.NONODE);
	}

	/**
	 * Reads the node, setting a one-time watch on it; the answer (OK or NONODE) goes to
	 * the callback.
	 */
	void watch(String path, Watcher watcher, BackgroundCallback answer) throws Exception {
		this.client.getData().usingWatcher(watcher).inBackground(answer).forPath(path);
	}

	CuratorEvent getChildren(String path, long deadline) throws Exception {
		return call(deadline, (callback) -> this.client.getChildren().inBackground(callback).forPath(path), Code.OK,
				Code.NONODE);
	}

	CuratorEvent exists(String path, long deadline) throws Exception {
		return call(deadline, (callback) -> this.client.checkExists().inBackground(callback).forPath(path), Code.OK,
				Code.NONODE);
	}

	/**
	 * Creates an ephemeral sequential node, with Curator's protection against lost create
	 * responses, and its parents if needed.
	 * @return the path created
	 */
	String createEphemeralSequential(String path, byte[] data, long deadline) throws Exception {
		return created(createEphemeralSequential(path, data), deadline);
	}

	/**
	 * Sends the create of {@link #createEphemeralSequential(String, byte[], long)}
	 * without waiting, so that many are sent before the first answer is awaited; see
	 * {@link #created}.
	 */
	CompletableFuture<CuratorEvent> createEphemeralSequential(String path, byte[] data) throws Exception {
		CompletableFuture<CuratorEvent> created = new CompletableFuture<>();
		this.client.create()
			.creatingParentsIfNeeded()
			.withProtection()
			.withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
			.inBackground((client, event) -> {
				// CURATOR-498: an answer that comes after the call gave up deletes its
				// own node, and only it.
				if (!created.complete(event) && event.getResultCode() == Code.OK.intValue()) {
					deleteInBackground(event.getName());
				}
			})
			.forPath(path, data);
		return created;
	}

	/**
	 * Awaits a create sent by {@link #createEphemeralSequential(String, byte[])}.
	 * @return the path created
	 */
	String created(CompletableFuture<CuratorEvent> created, long deadline) throws Exception {
		return expect(await(created, deadline), Code.OK).getName();
	}

	/**
	 * Creates a node, and its parents if needed.
	 * @return the answer: OK, or NODEEXISTS
	 */
	CuratorEvent createNode(String path, byte[] data, CreateMode mode, long deadline) throws Exception {
		return call(deadline,
				(callback) -> this.client.create()
					.creatingParentsIfNeeded()
					.withMode(mode)
					.inBackground(callback)
					.forPath(path, data),
				Code.OK, Code.NODEEXISTS);
	}

	/**
	 * Deletes a node, any version.
	 * @return the answer: OK, or NONODE
	 */
	CuratorEvent deleteNode(String path, long deadline) throws Exception {
		return call(deadline, (callback) -> this.client.delete().inBackground(callback).forPath(path), Code.OK,
				Code.NONODE);
	}

	/**
	 * Deletes a node without waiting; if that fails, the node still goes with its
	 * session.
	 */
	void deleteInBackground(String path) {
		try {
			this.client.delete().quietly().inBackground().forPath(path);
		}
		catch (Exception ex) {
			logger.debug("Could not delete {}", path, ex);
		}
	}

	/**
	 * Runs the operations atomically.
	 * @return the answer: OK, or BADVERSION or NONODE when a check failed (see
	 * {@link #isConflict})
	 */
	CuratorEvent transaction(long deadline, CuratorOp... operations) throws Exception {
		return call(deadline, (callback) -> this.client.transaction().inBackground(callback).forOperations(operations),
				Code.OK, Code.BADVERSION, Code.NONODE);
	}

	/**
	 * Creates nodes in one multi-operation.
	 * @param deleteIfLate whether an answer that comes after the call gave up deletes the
	 * nodes it made, and only them (CURATOR-498, as
	 * {@link #createEphemeralSequential(String, byte[])} does for one): for queue nodes,
	 * which nobody would answer for
	 * @return the answer: OK, or NONODE or NODEEXISTS when none was created
	 */
	CuratorEvent createAll(long deadline, List<CuratorOp> creates, boolean deleteIfLate) throws Exception {
		CompletableFuture<CuratorEvent> created = new CompletableFuture<>();
		this.client.transaction().inBackground((client, event) -> {
			if (!created.complete(event) && deleteIfLate && event.getResultCode() == Code.OK.intValue()) {
				for (CuratorTransactionResult result : event.getOpResults()) {
					deleteInBackground(result.getResultPath());
				}
			}
		}).forOperations(creates);
		return expect(await(created, deadline), Code.OK, Code.NONODE, Code.NODEEXISTS);
	}

	/**
	 * Reads with read-only multi-operations (ZooKeeper 3.6 and later, which Curator's
	 * transactions do not offer), at most {@code perRequest} operations in each. All the
	 * requests are sent before any answer is awaited, so that the caller waits one round
	 * trip however many there are. Unlike a transaction, each read stands alone: a node
	 * that is gone does not keep the others from being read.
	 * @return one result per operation, in order: the node's data or children, or an
	 * {@link OpResult.ErrorResult} with NONODE
	 */
	List<OpResult> read(List<Op> operations, int perRequest, long deadline) throws Exception {
		ZooKeeper zookeeper = this.client.getZookeeperClient().getZooKeeper();
		List<CompletableFuture<List<OpResult>>> answers = new ArrayList<>();
		for (int from = 0; from < operations.size(); from += perRequest) {
			CompletableFuture<List<OpResult>> answer = new CompletableFuture<>();
			// Results come only when the request was answered; a failed read among them
			// sets the code.
			zookeeper.multi(operations.subList(from, Math.min(operations.size(), from + perRequest)),
					(rc, path, context, results) -> {
						if (results != null) {
							answer.complete(results);
						}
						else {
							answer.completeExceptionally(KeeperException.create(Code.get(rc)));
						}
					}, null);
			answers.add(answer);
		}
		List<OpResult> results = new ArrayList<>(operations.size());
		for (CompletableFuture<List<OpResult>> answer : answers) {
			for (OpResult result : await(answer, deadline)) {
				if (result instanceof OpResult.ErrorResult error && error.getErr() != Code.NONODE.intValue()) {
					throw KeeperException.create(Code.get(error.getErr()));
				}
				results.add(result);
			}
		}
		return results;
	}

	/** Reads a node's data and stat, in {@link #read}. */
	Op readData(String path) {
		return Op.getData(ZKPaths.fixForNamespace(this.client.getNamespace(), path));
	}

	/** Reads a node's children, in {@link #read}. */
	Op readChildren(String path) {
		return Op.getChildren(ZKPaths.fixForNamespace(this.client.getNamespace(), path));
	}

	/**
	 * How many bytes one request or answer of a batch may take: half the largest packet
	 * the client accepts ({@code jute.maxbuffer}, 1 MB by default, the server's default
	 * too). A larger packet is not refused: the client (or the server) drops the
	 * connection, which suspends every lease of this node. The other half is room for
	 * estimates that fall short.
	 */
	int batchBytes() throws Exception {
		ZKClientConfig config = this.client.getZookeeperClient().getZooKeeper().getClientConfig();
		return config.getInt(ZKConfig.JUTE_MAXBUFFER, ZKClientConfig.CLIENT_MAX_PACKET_LENGTH_DEFAULT) / 2;
	}

	/** Requires the node to exist (any version). */
	CuratorOp check(String path) throws Exception {
		return this.client.transactionOp().check().forPath(path);
	}

	CuratorOp check(String path, int version) throws Exception {
		return this.client.transactionOp().check().withVersion(version).forPath(path);
	}

	CuratorOp setData(String path, int version, byte[] data) throws Exception {
		return this.client.transactionOp().setData().withVersion(version).forPath(path, data);
	}

	CuratorOp delete(String path) throws Exception {
		return this.client.transactionOp().delete().forPath(path);
	}

	CuratorOp create(String path, byte[] data, CreateMode mode) throws Exception {
		return this.client.transactionOp().create().withMode(mode).forPath(path, data);
	}

	/** Whether a transaction failed on a check: somebody changed the group first. */
	static boolean isConflict(CuratorEvent result) {
		return result.getResultCode() != Code.OK.intValue();
	}

	static boolean isOk(CuratorEvent result) {
		return result.getResultCode() == Code.OK.intValue();
	}

	/** The version that the transaction's setData left. */
	static int newVersion(CuratorEvent result) {
		return result.getOpResults()
			.stream()
			.filter((op) -> op.getType() == OperationType.SET_DATA)
			.map(CuratorTransactionResult::getResultStat)
			.findFirst()
			.orElseThrow()
			.getVersion();
	}

	private CuratorEvent call(long deadline, Background operation, Code... accepted) throws Exception {
		CompletableFuture<CuratorEvent> result = new CompletableFuture<>();
		operation.start((client, event) -> result.complete(event));
		return expect(await(result, deadline), accepted);
	}

	private static <T> T await(CompletableFuture<T> result, long deadline) throws Exception {
		try {
			return result.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			if (result.cancel(false)) {
				throw new TimeoutException("ZooKeeper did not answer in time");
			}
			return result.join(); // answered just now
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof Exception cause) ? cause : ex;
		}
	}

	private static CuratorEvent expect(CuratorEvent event, Code... accepted) throws KeeperException {
		Code code = Code.get(event.getResultCode());
		for (Code ok : accepted) {
			if (code == ok) {
				return event;
			}
		}
		throw KeeperException.create(code, event.getPath());
	}

	@FunctionalInterface
	private interface Background {

		void start(BackgroundCallback callback) throws Exception;

	}

}
