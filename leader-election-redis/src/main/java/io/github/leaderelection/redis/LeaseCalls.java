package io.github.leaderelection.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.spi.StoreCall;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * How the scripts of a {@link RedisLeaseStore} reach Redis: on the application's Lettuce
 * connection, within one deadline per operation, and, when the store asks for replica
 * acknowledgements, followed by a {@code WAIT} on the connection that carried the writes.
 *
 * <p>
 * The scripts of one operation are all sent before any reply is awaited. Lettuce writes
 * each command as it is issued and matches replies as they arrive, so the scripts are
 * pipelined: a batch costs one round trip (on a cluster, one per master, all at once).
 * Auto-flush is left on: turning it off on the shared connection would hold back the
 * commands of every other thread that uses it.
 */
final class LeaseCalls {

	/**
	 * Said when no replica acknowledged: most often a server without replicas, where no
	 * wait can ever succeed and no leader is ever elected.
	 */
	private static final String NO_REPLICA_HINT = ". No replica acknowledged: a Redis server without replicas "
			+ "(standalone, or its replicas down) never does, and then nobody can lead. Set "
			+ "leader-election.redis.replica-acks=0 for a server without replicas, or check that its replicas are "
			+ "connected (INFO replication, connected_slaves)";

	private final LettuceConnectionFactory connectionFactory;

	private final int replicaAcks;

	private final Duration replicaAckTimeout;

	LeaseCalls(LettuceConnectionFactory connectionFactory, int replicaAcks, Duration replicaAckTimeout) {
		this.connectionFactory = connectionFactory;
		this.replicaAcks = replicaAcks;
		this.replicaAckTimeout = replicaAckTimeout;
	}

	/**
	 * Splits items into the batches that one script each takes: at most
	 * {@link LeaseScripts#MAX_GROUPS} of them, and on a cluster only items whose keys
	 * share a hash slot, since Redis Cluster refuses a script whose keys span slots. A
	 * standalone or Sentinel server does not enforce slots, so there items of any slots
	 * share a script.
	 * @param key a key of an item, which names its slot
	 */
	<T> List<List<T>> batches(List<T> items, Function<T, String> key) {
		boolean cluster = this.connectionFactory.isClusterAware();
		Map<Integer, List<T>> bySlot = new LinkedHashMap<>();
		for (T item : items) {
			int slot = cluster ? SlotHash.getSlot(key.apply(item)) : 0;
			bySlot.computeIfAbsent(slot, (any) -> new ArrayList<>()).add(item);
		}
		List<List<T>> batches = new ArrayList<>();
		for (List<T> slotItems : bySlot.values()) {
			for (int from = 0; from < slotItems.size(); from += LeaseScripts.MAX_GROUPS) {
				batches.add(slotItems.subList(from, Math.min(slotItems.size(), from + LeaseScripts.MAX_GROUPS)));
			}
		}
		return batches;
	}

	/**
	 * Starts an operation.
	 * @param action what it does, for messages: {@code "renew the lease of group 'x'"}
	 * @param keys the keys it touches, for messages
	 */
	Call call(String action, String keys, Duration timeout, boolean waitsForReplicas) {
		return new Call(action, keys, timeout, waitsForReplicas);
	}

	/**
	 * Gives up on replies still due; a run that Redis still performs judges by what it
	 * finds.
	 */
	private static void cancel(List<? extends Future<?>> sent) {
		for (Future<?> future : sent) {
			if (!future.isDone()) {
				future.cancel(true);
			}
		}
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	/** One run of a script: keys of one hash slot, and arguments. */
	record Script(byte[][] keys, byte[][] args) {

		Script(List<String> keys, List<String> args) {
			this(keys.stream().map(LeaseCalls::bytes).toArray(byte[][]::new),
					args.stream().map(LeaseCalls::bytes).toArray(byte[][]::new));
		}

	}

	/**
	 * One operation: its scripts and its {@code WAIT} run on one connection per server
	 * (which {@code WAIT} needs: it counts the acknowledgements of the writes of its own
	 * connection) within one deadline.
	 */
	final class Call {

		private final String action;

		private final StoreCall call;

		private final boolean waitsForReplicas;

		private long acknowledged = -1;

		private Call(String action, String keys, Duration timeout, boolean waitsForReplicas) {
			this.action = action;
			this.call = StoreCall.start(action, "in Redis (" + keys + ")", timeout);
			this.waitsForReplicas = waitsForReplicas;
		}

		List<Object> run(LeaseScripts script, Script run) {
			return runAll(script, List.of(run)).get(0);
		}

		/** Runs the script once for each run, pipelined, and returns their replies. */
		List<List<Object>> runAll(LeaseScripts script, List<Script> runs) {
			List<RedisFuture<List<Object>>> sent = new ArrayList<>(runs.size());
			try (RedisConnection connection = LeaseCalls.this.connectionFactory.getConnection()) {
				// The release scripts go whole, not by digest: a leader that gives up
				// because it no longer hears from Redis releases over that same link,
				// and a NOSCRIPT answer (an empty script cache after a restart) that
				// never arrives would leave the lease in place. Releases are rare.
				boolean releases = script == LeaseScripts.RELEASE || script == LeaseScripts.RELEASE_ALL;
				List<RedisClusterAsyncCommands<byte[], byte[]>> targets = new ArrayList<>(runs.size());
				for (Script run : runs) {
					targets.add(commands(connection, run.keys()[0]));
					sent.add(send(targets.get(targets.size() - 1), script, run, !releases));
				}
				List<List<Object>> replies = new ArrayList<>(runs.size());
				List<Integer> resent = new ArrayList<>();
				for (int i = 0; i < runs.size(); i++) {
					try {
						replies.add(await(sent.get(i)));
					}
					catch (ExecutionException ex) {
						if (!(ex.getCause() instanceof RedisNoScriptException)) {
							throw ex;
						}
						// That server lacks the script: send it whole, still without
						// waiting for each run before the next.
						sent.set(i, send(targets.get(i), script, runs.get(i), false));
						replies.add(List.of());
						resent.add(i);
					}
				}
				for (int i : resent) {
					replies.set(i, await(sent.get(i)));
				}
				if (this.waitsForReplicas && !releases) {
					awaitReplicas(script, targets, replies);
				}
				return replies;
			}
			catch (TimeoutException ex) {
				cancel(sent);
				throw this.call.timedOut(ex);
			}
			catch (InterruptedException ex) {
				cancel(sent);
				throw this.call.interrupted(ex);
			}
			catch (ExecutionException ex) {
				cancel(sent);
				throw this.call.failed((ex.getCause() != null) ? ex.getCause() : ex);
			}
			catch (RuntimeException ex) {
				cancel(sent);
				throw this.call.failed(ex);
			}
		}

		private RedisFuture<List<Object>> send(RedisClusterAsyncCommands<byte[], byte[]> commands, LeaseScripts script,
				Script run, boolean byDigest) {
			return byDigest ? commands.evalsha(script.sha1(), ScriptOutputType.MULTI, run.keys(), run.args())
					: commands.eval(script.source(), ScriptOutputType.MULTI, run.keys(), run.args());
		}

		/**
		 * Asks each server that a run wrote to how many replicas have the writes of this
		 * connection so far, all at once, and keeps the fewest. The server-side timeout
		 * is never 0, which would wait forever, and for an acquire only half of the time
		 * left, which keeps the other half to give the lease back. An answer that does
		 * not come counts as none.
		 */
		private void awaitReplicas(LeaseScripts script, List<RedisClusterAsyncCommands<byte[], byte[]>> targets,
				List<List<Object>> replies) throws InterruptedException {
			Set<RedisClusterAsyncCommands<byte[], byte[]>> written = Collections.newSetFromMap(new IdentityHashMap<>());
			for (int i = 0; i < targets.size(); i++) {
				if (script.wrote(replies.get(i))) {
					written.add(targets.get(i));
				}
			}
			long remaining = TimeUnit.NANOSECONDS.toMillis(this.call.deadline() - System.nanoTime());
			boolean acquires = script == LeaseScripts.ACQUIRE || script == LeaseScripts.ACQUIRE_ALL;
			long budget = acquires ? remaining / 2 : remaining;
			long timeout = Math.max(1, Math.min(LeaseCalls.this.replicaAckTimeout.toMillis(), budget));
			List<RedisFuture<Long>> waits = new ArrayList<>();
			for (RedisClusterAsyncCommands<byte[], byte[]> commands : written) {
				waits.add(commands.waitForReplication(LeaseCalls.this.replicaAcks, timeout));
			}
			for (RedisFuture<Long> wait : waits) {
				try {
					long acks = await(wait);
					this.acknowledged = (this.acknowledged < 0) ? acks : Math.min(this.acknowledged, acks);
				}
				catch (ExecutionException | TimeoutException ex) {
					this.acknowledged = 0;
				}
			}
		}

		/** Whether enough replicas acknowledged; to ask only after a run wrote. */
		boolean replicated() {
			return !this.waitsForReplicas || this.acknowledged >= LeaseCalls.this.replicaAcks;
		}

		LeaderElectionException notReplicated() {
			return new LeaderElectionException("Could not " + this.action + " in Redis: " + this.acknowledged
					+ " of the " + LeaseCalls.this.replicaAcks
					+ " replica acknowledgements required (replica-acks) arrived within the replica-ack-timeout ("
					+ LeaseCalls.this.replicaAckTimeout.toMillis() + "ms) or the call's timeout"
					+ ((this.acknowledged <= 0) ? NO_REPLICA_HINT : ""));
		}

		/**
		 * The connection's commands, which a cluster connection routes by the first key;
		 * when waiting for replicas on a cluster, those of the master of the key's slot,
		 * so that the script and {@code WAIT} share one connection.
		 */
		@SuppressWarnings("unchecked")
		private RedisClusterAsyncCommands<byte[], byte[]> commands(RedisConnection connection, byte[] key) {
			Object nativeConnection = connection.getNativeConnection();
			if (!(nativeConnection instanceof RedisClusterAsyncCommands<?, ?>)) {
				throw new IllegalStateException("Not a Lettuce connection: " + nativeConnection.getClass().getName());
			}
			if (this.waitsForReplicas && nativeConnection instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster) {
				var stateful = ((RedisAdvancedClusterAsyncCommands<byte[], byte[]>) cluster).getStatefulConnection();
				RedisClusterNode master = stateful.getPartitions().getMasterBySlot(SlotHash.getSlot(key));
				if (master == null) {
					throw new IllegalStateException(
							"No known master serves the slot of " + new String(key, StandardCharsets.UTF_8));
				}
				return stateful.getConnection(master.getUri().getHost(), master.getUri().getPort()).async();
			}
			return (RedisClusterAsyncCommands<byte[], byte[]>) nativeConnection;
		}

		private <T> T await(Future<T> future) throws ExecutionException, InterruptedException, TimeoutException {
			return future.get(Math.max(0, this.call.deadline() - System.nanoTime()), TimeUnit.NANOSECONDS);
		}

	}

}
