package io.github.leaderelection.zookeeper;

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
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Watcher;
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
		return expect(await(created, deadline), Code.OK).getName();
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

	private static CuratorEvent await(CompletableFuture<CuratorEvent> result, long deadline) throws Exception {
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
