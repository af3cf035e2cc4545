package io.github.leaderelection.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;

import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A lease store in Redis (standalone, Sentinel or Cluster, as the application's Lettuce
 * connection factory reaches it), safe when Redis loses its data.
 *
 * <p>
 * A group has two keys in one hash slot, {@code <prefix>{<group>}:lease} (the live lease,
 * expired by Redis) and {@code <prefix>{<group>}:term} (a record without expiry: holder,
 * term, lease end and the Redis process that vouches for them), and a channel
 * {@code <prefix>{<group>}:events} on which release, force and clear are announced;
 * {@code %}, <code>{</code> and <code>}</code> in a group name are percent-encoded so
 * that they cannot change the hash tag. Every operation is one Lua script, whose only
 * clock is Redis's {@code TIME}; see {@link LeaseScripts}.
 *
 * <p>
 * When Redis loses data (a restart without persistence, {@code FLUSHALL}, a restart from
 * an old snapshot, a failover to a replica that missed writes), a leader may still
 * believe it leads. A grant that cannot prove the previous lease over (the record is
 * missing although this store saw it, or was not written by the Redis process now serving
 * it) therefore tells the engine to wait one lease duration before acting, and takes a
 * term of at least Redis's clock in microseconds. Other grants take the last term plus
 * one, so every term stays at most the microseconds of its grant (grants are scripts of
 * more than a microsecond each), and the new term is above every earlier one as long as
 * Redis's clock has not stepped back when the data is lost. NOTE: a candidate process
 * that never saw a group cannot tell a lost record from a group never led, and acts at
 * once; the leader that lost its record stops at its next renewal, or at its renew
 * deadline while Redis does not answer.
 *
 * <p>
 * Each call waits at most the timeout it is given (less if the connection factory's
 * command timeout is shorter); only opening a new connection is bounded by the factory's
 * connect timeout instead. A command given up on may still run later: every script judges
 * by the state it finds, so a late one is harmless.
 */
public class RedisLeaseStore implements LeaseStore {

	/** The default key prefix. */
	public static final String DEFAULT_KEY_PREFIX = "leader-election:";

	static final String KEY_PREFIX_PATTERN = "^[A-Za-z][A-Za-z0-9_.:]*(-[A-Za-z0-9_.:]+)*$";

	private static final Pattern KEY_PREFIX = Pattern.compile(KEY_PREFIX_PATTERN);

	private static final int KEY_PREFIX_MAX_LENGTH = 64;

	private final RedisConnectionFactory connectionFactory;

	private final String keyPrefix;

	/**
	 * Said when no replica acknowledged: most often a server without replicas, where no
	 * wait can ever succeed and no leader is ever elected.
	 */
	private static final String NO_REPLICA_HINT = ". No replica acknowledged: a Redis server without replicas "
			+ "(standalone, or its replicas down) never does, and then nobody can lead. Set "
			+ "leader-election.redis.replica-acks=0 for a server without replicas, or check that its replicas are "
			+ "connected (INFO replication, connected_slaves)";

	private final int replicaAcks;

	private final Duration replicaAckTimeout;

	/** The highest term this store has seen of each group: a record below it was lost. */
	private final Map<String, Long> seenTerms = new ConcurrentHashMap<>();

	private final LeaseEvents events;

	public RedisLeaseStore(RedisConnectionFactory connectionFactory) {
		this(connectionFactory, DEFAULT_KEY_PREFIX);
	}

	public RedisLeaseStore(RedisConnectionFactory connectionFactory, String keyPrefix) {
		this(connectionFactory, keyPrefix, 0, Duration.ZERO);
	}

	/**
	 * Creates a store that, after each acquire and renew, waits for replicas to
	 * acknowledge the write ({@code WAIT}) and counts the operation as failed when fewer
	 * than {@code replicaAcks} do within {@code replicaAckTimeout} (or the call's own
	 * timeout, if shorter).
	 * @param keyPrefix a prefix of letters, digits, {@code _ . : -} (no {@code --}),
	 * starting with a letter
	 * @param replicaAcks replicas that must acknowledge; 0 not to wait
	 * @throws IllegalArgumentException if the prefix or the acknowledgement options are
	 * invalid
	 */
	public RedisLeaseStore(RedisConnectionFactory connectionFactory, String keyPrefix, int replicaAcks,
			Duration replicaAckTimeout) {
		Objects.requireNonNull(connectionFactory, "connectionFactory");
		if (!(connectionFactory instanceof LettuceConnectionFactory)) {
			throw new IllegalArgumentException("The Redis lease store needs a LettuceConnectionFactory (Lettuce), not "
					+ connectionFactory.getClass().getName());
		}
		this.connectionFactory = connectionFactory;
		this.keyPrefix = requireValidPrefix(keyPrefix);
		if (replicaAcks < 0) {
			throw new IllegalArgumentException("replicaAcks must not be negative but is " + replicaAcks);
		}
		Objects.requireNonNull(replicaAckTimeout, "replicaAckTimeout");
		if (replicaAcks > 0 && replicaAckTimeout.toMillis() < 1) {
			throw new IllegalArgumentException(
					"replicaAckTimeout must be at least 1ms when replicaAcks is set, but is " + replicaAckTimeout);
		}
		this.replicaAcks = replicaAcks;
		this.replicaAckTimeout = replicaAckTimeout;
		this.events = new LeaseEvents(connectionFactory);
	}

	private static String requireValidPrefix(String keyPrefix) {
		Objects.requireNonNull(keyPrefix, "keyPrefix");
		if (keyPrefix.length() > KEY_PREFIX_MAX_LENGTH || !KEY_PREFIX.matcher(keyPrefix).matches()) {
			throw new IllegalArgumentException("Invalid Redis key prefix '" + keyPrefix + "': it must match "
					+ KEY_PREFIX_PATTERN + " and have at most " + KEY_PREFIX_MAX_LENGTH + " characters");
		}
		return keyPrefix;
	}

	@Override
	public Optional<Lease> read(String group, Duration timeout) {
		return toLease(group, call("read the lease of", group, timeout, LeaseScripts.READ, false));
	}

	@Override
	public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		Call call = new Call("acquire the lease of", group, timeout, this.replicaAcks > 0);
		Optional<Lease> lease = toLease(group,
				call.run(LeaseScripts.ACQUIRE, candidateId, millis(leaseDuration), seenTerm(group)));
		if (lease.isPresent() && !call.replicated()) {
			// Never acted on: give it back quietly (an announcement would only make every
			// follower
			// try, and fail, at once), so that nobody waits for it to expire.
			try {
				call.run(LeaseScripts.RELEASE, candidateId, Long.toString(lease.get().term()), "");
			}
			catch (LeaderElectionException ex) {
				// It expires on its own.
			}
			throw call.notReplicated();
		}
		return lease;
	}

	@Override
	public boolean renew(Lease lease, Duration leaseDuration, Duration timeout) {
		if (lease.holder() == null) {
			return false;
		}
		Call call = new Call("renew the lease of", lease.group(), timeout, this.replicaAcks > 0);
		boolean renewed = isOne(
				call.run(LeaseScripts.RENEW, lease.holder(), Long.toString(lease.term()), millis(leaseDuration)));
		if (renewed && !call.replicated()) {
			// A failure, not "lost": the leader keeps its belief until its deadline,
			// which counts from
			// the last renewal that replicas did confirm.
			throw call.notReplicated();
		}
		return renewed;
	}

	@Override
	public void release(Lease lease, Duration timeout) {
		if (lease.holder() != null) {
			call("release the lease of", lease.group(), timeout, LeaseScripts.RELEASE, false, lease.holder(),
					Long.toString(lease.term()), channel(lease.group()));
		}
	}

	@Override
	public void forceLeader(String group, String candidateId, Duration timeout) {
		Objects.requireNonNull(candidateId, "candidateId");
		call("force a leader for", group, timeout, LeaseScripts.FORCE, false, candidateId, seenTerm(group),
				channel(group));
	}

	@Override
	public void clear(String group, Duration timeout) {
		call("clear the holder of", group, timeout, LeaseScripts.CLEAR, false, channel(group));
	}

	/**
	 * Calls {@code onChange} whenever a release, force or clear of the group is
	 * announced, from one pub/sub connection that this store shares between all its
	 * watches. When Redis cannot be reached, the subscription is retried in the
	 * background until it succeeds or is closed.
	 */
	@Override
	public AutoCloseable watch(String group, Runnable onChange) {
		return this.events.watch(channel(group), onChange);
	}

	@Override
	public String backend() {
		return "redis";
	}

	/** Closes the pub/sub connection of the watches, if there is one. */
	@Override
	public void close() {
		this.events.close();
	}

	// Keys

	/**
	 * Returns a key of the group: the group sits inside the hash tag, so one group is one
	 * slot.
	 */
	String key(String group, String suffix) {
		return this.keyPrefix + "{" + hashTag(group) + "}:" + suffix;
	}

	private String channel(String group) {
		return key(group, "events");
	}

	/**
	 * Encodes a group so that it contains no brace, which would end the hash tag early
	 * (Redis hashes up to the first <code>}</code>) or, for an empty tag, hash each key
	 * whole.
	 */
	static String hashTag(String group) {
		if (group.isEmpty()) {
			return "%";
		}
		StringBuilder tag = new StringBuilder(group.length());
		for (int i = 0; i < group.length(); i++) {
			char c = group.charAt(i);
			switch (c) {
				case '%' -> tag.append("%25");
				case '{' -> tag.append("%7B");
				case '}' -> tag.append("%7D");
				default -> tag.append(c);
			}
		}
		return tag.toString();
	}

	// Results

	private Optional<Lease> toLease(String group, List<Object> reply) {
		if (reply.isEmpty()) {
			return Optional.empty();
		}
		String holder = new String((byte[]) reply.get(0), StandardCharsets.UTF_8);
		long term = (Long) reply.get(1);
		this.seenTerms.merge(group, term, Math::max);
		return Optional.of(new Lease(group, holder.isEmpty() ? null : holder, term,
				Duration.ofMillis((Long) reply.get(2)), Duration.ofMillis((Long) reply.get(3))));
	}

	private String seenTerm(String group) {
		return Long.toString(this.seenTerms.getOrDefault(group, 0L));
	}

	private static boolean isOne(List<Object> reply) {
		return !reply.isEmpty() && Long.valueOf(1).equals(reply.get(0));
	}

	private static String millis(Duration duration) {
		return Long.toString(Math.max(1, duration.toMillis()));
	}

	private List<Object> call(String operation, String group, Duration timeout, LeaseScripts script, boolean pinned,
			String... args) {
		return new Call(operation, group, timeout, pinned).run(script, args);
	}

	/**
	 * One operation: its scripts and its {@code WAIT} run on one connection (which
	 * {@code WAIT} needs: it counts the acknowledgements of the writes of its own
	 * connection) within one deadline.
	 */
	private final class Call {

		private final String operation;

		private final String group;

		private final byte[][] keys;

		private final long deadline;

		private final boolean waitsForReplicas;

		private long acknowledged = -1;

		Call(String operation, String group, Duration timeout, boolean waitsForReplicas) {
			Objects.requireNonNull(group, "group");
			this.operation = operation;
			this.group = group;
			this.keys = new byte[][] { bytes(key(group, "lease")), bytes(key(group, "term")) };
			this.deadline = System.nanoTime() + Math.max(1, timeout.toNanos());
			this.waitsForReplicas = waitsForReplicas;
		}

		List<Object> run(LeaseScripts script, String... args) {
			byte[][] values = new byte[args.length][];
			for (int i = 0; i < args.length; i++) {
				values[i] = bytes(args[i]);
			}
			try (RedisConnection connection = RedisLeaseStore.this.connectionFactory.getConnection()) {
				RedisClusterAsyncCommands<byte[], byte[]> commands = commands(connection);
				List<Object> reply;
				if (script == LeaseScripts.RELEASE) {
					// The whole script, not its digest: a leader that gives up because it
					// no longer hears from Redis releases over that same link, and a
					// NOSCRIPT answer (the script cache is empty after a restart) that
					// never arrives would leave the lease in place. Releases are rare.
					reply = await(commands.eval(script.source(), ScriptOutputType.MULTI, this.keys, values));
				}
				else {
					try {
						reply = await(commands.evalsha(script.sha1(), ScriptOutputType.MULTI, this.keys, values));
					}
					catch (ExecutionException ex) {
						if (!(ex.getCause() instanceof RedisNoScriptException)) {
							throw ex;
						}
						reply = await(commands.eval(script.source(), ScriptOutputType.MULTI, this.keys, values));
					}
				}
				if (this.waitsForReplicas && script != LeaseScripts.RELEASE && !reply.isEmpty()
						&& !Long.valueOf(0).equals(reply.get(0))) {
					awaitReplicas(commands, script == LeaseScripts.ACQUIRE);
				}
				return reply;
			}
			catch (TimeoutException ex) {
				throw new LeaderElectionException("Could not " + this.operation + " group '" + this.group
						+ "' in Redis (" + keyPattern() + ") within the call's timeout", ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new LeaderElectionException(
						"Interrupted while trying to " + this.operation + " group '" + this.group + "' in Redis", ex);
			}
			catch (ExecutionException ex) {
				Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
				throw failure(cause);
			}
			catch (RuntimeException ex) {
				throw (ex instanceof LeaderElectionException election) ? election : failure(ex);
			}
		}

		/**
		 * Asks how many replicas have the writes of this connection so far. The
		 * server-side timeout is never 0, which would wait forever, and for an acquire
		 * only half of the time left, which keeps the other half to give the lease back.
		 * An answer that does not come counts as none.
		 */
		private void awaitReplicas(RedisClusterAsyncCommands<byte[], byte[]> commands, boolean keepTimeToRelease)
				throws InterruptedException {
			long remaining = TimeUnit.NANOSECONDS.toMillis(this.deadline - System.nanoTime());
			long budget = keepTimeToRelease ? remaining / 2 : remaining;
			long timeout = Math.max(1, Math.min(RedisLeaseStore.this.replicaAckTimeout.toMillis(), budget));
			try {
				this.acknowledged = await(commands.waitForReplication(RedisLeaseStore.this.replicaAcks, timeout));
			}
			catch (ExecutionException | TimeoutException ex) {
				this.acknowledged = 0;
			}
		}

		boolean replicated() {
			return !this.waitsForReplicas || this.acknowledged >= RedisLeaseStore.this.replicaAcks;
		}

		LeaderElectionException notReplicated() {
			return new LeaderElectionException("Could not " + this.operation + " group '" + this.group + "' in Redis: "
					+ this.acknowledged + " of the " + RedisLeaseStore.this.replicaAcks
					+ " replica acknowledgements required (replica-acks) arrived within the replica-ack-timeout ("
					+ RedisLeaseStore.this.replicaAckTimeout.toMillis() + "ms) or the call's timeout"
					+ ((this.acknowledged <= 0) ? NO_REPLICA_HINT : ""));
		}

		/**
		 * The connection's commands; when waiting for replicas on a cluster, those of the
		 * master of the group's slot, so that the script and {@code WAIT} share one
		 * connection.
		 */
		@SuppressWarnings("unchecked")
		private RedisClusterAsyncCommands<byte[], byte[]> commands(RedisConnection connection) {
			Object nativeConnection = connection.getNativeConnection();
			if (!(nativeConnection instanceof RedisClusterAsyncCommands<?, ?>)) {
				throw new IllegalStateException("Not a Lettuce connection: " + nativeConnection.getClass().getName());
			}
			if (this.waitsForReplicas && nativeConnection instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster) {
				var stateful = ((RedisAdvancedClusterAsyncCommands<byte[], byte[]>) cluster).getStatefulConnection();
				RedisClusterNode master = stateful.getPartitions().getMasterBySlot(SlotHash.getSlot(this.keys[0]));
				if (master == null) {
					throw new IllegalStateException("No known master serves the slot of " + keyPattern());
				}
				return stateful.getConnection(master.getUri().getHost(), master.getUri().getPort()).async();
			}
			return (RedisClusterAsyncCommands<byte[], byte[]>) nativeConnection;
		}

		private <T> T await(Future<T> future) throws ExecutionException, InterruptedException, TimeoutException {
			try {
				return future.get(Math.max(0, this.deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
			}
			catch (TimeoutException ex) {
				future.cancel(true);
				throw ex;
			}
		}

		private LeaderElectionException failure(Throwable cause) {
			return new LeaderElectionException("Could not " + this.operation + " group '" + this.group + "' in Redis ("
					+ keyPattern() + "): " + cause.getMessage(), cause);
		}

		private String keyPattern() {
			return "keys " + key(this.group, "*");
		}

	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

}
