package io.github.leaderelection.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.leaderelection.testing.ReplicatedStore;
import io.github.leaderelection.testing.StoreServer;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.RestoreArgs;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * The election's keys in Redis, all under the nodes' prefix {@value #PREFIX}: per group a
 * lease key that Redis expires and a record hash ({@code :term}); see
 * {@code LeaseScripts} in the Redis store. Always on the harness's own server (the
 * master, with Sentinel), never the shared one.
 */
final class RedisStoreData implements StoreData {

	/** The prefix the nodes give their store (see {@code ChaosNode}). */
	static final String PREFIX = "chaos:";

	/**
	 * Lowers the record's term in one step, so that a grant cannot slip in between the
	 * read and the write; {@code %d} keeps a term of Redis's microseconds an integer.
	 */
	private static final String LOWER_TERM = """
			local term = redis.call('HGET', KEYS[1], 'term')
			if not term then
			  return {}
			end
			local lowered = math.max(0, tonumber(term) - tonumber(ARGV[1]))
			redis.call('HSET', KEYS[1], 'term', string.format('%d', lowered))
			return {term, string.format('%d', lowered)}
			""";

	private final StoreServer store;

	private RedisClient client;

	private StatefulRedisConnection<String, String> connection;

	RedisStoreData(StoreServer store) {
		this.store = store;
	}

	@Override
	public Copy copy() {
		return call((redis) -> {
			long now = serverMillis(redis);
			List<Key> keys = new ArrayList<>();
			for (String key : keys(redis)) {
				byte[] dump = redis.dump(key);
				Long expiresAt = redis.pexpiretime(key);
				if (dump != null && expiresAt != null && expiresAt != -2) {
					keys.add(new Key(key, dump, expiresAt));
				}
			}
			return new Keys(keys, now);
		});
	}

	/**
	 * Like loading an old RDB file: every key as the copy had it, with its expiry at the
	 * same instant of Redis's clock, so that a key that has expired since is not
	 * restored; the keys written since are gone.
	 */
	@Override
	public String restore(Copy copy) {
		List<Key> keys = ((Keys) copy).keys();
		return call((redis) -> {
			long now = serverMillis(redis);
			List<String> current = keys(redis);
			int restored = 0;
			redis.multi();
			if (!current.isEmpty()) {
				redis.del(current.toArray(new String[0]));
			}
			for (Key key : keys) {
				if (key.expiresAt() == -1) {
					redis.restore(key.name(), key.dump(), new RestoreArgs().replace());
					restored++;
				}
				else if (key.expiresAt() > now) {
					redis.restore(key.name(), key.dump(), new RestoreArgs().replace().absttl().ttl(key.expiresAt()));
					restored++;
				}
			}
			redis.exec();
			return "restored-" + restored + "-of-" + keys.size() + "-keys";
		});
	}

	@Override
	public String deleteGroup(String group, boolean leaseToo) {
		return call((redis) -> {
			long deleted = leaseToo ? redis.del(key(group, "term"), key(group, "lease"))
					: redis.del(key(group, "term"));
			return "deleted-" + deleted + "-keys-of-" + group + (leaseToo ? "-record-and-lease" : "-record");
		});
	}

	@Override
	public String wipe(boolean drastic) {
		return call((redis) -> {
			if (drastic) {
				// The harness's own server holds nothing else.
				redis.flushall();
				return "flushall";
			}
			List<String> keys = keys(redis);
			long deleted = keys.isEmpty() ? 0 : redis.del(keys.toArray(new String[0]));
			return "deleted-" + deleted + "-keys";
		});
	}

	@Override
	public String lowerTerm(String group, long by) {
		return call((redis) -> {
			List<Object> result = redis.eval(LOWER_TERM, ScriptOutputType.MULTI, new String[] { key(group, "term") },
					Long.toString(by));
			if (result.isEmpty()) {
				return "no-record-of-" + group;
			}
			return "term-of-" + group + "-from-" + result.get(0) + "-to-" + result.get(1);
		});
	}

	/** A key of a group, as the store names it (the group names need no encoding). */
	private static String key(String group, String suffix) {
		return PREFIX + "{" + group + "}:" + suffix;
	}

	private static List<String> keys(RedisCommands<String, String> redis) {
		List<String> keys = new ArrayList<>();
		ScanCursor cursor = ScanCursor.INITIAL;
		do {
			KeyScanCursor<String> page = redis.scan(cursor, ScanArgs.Builder.matches(PREFIX + "*").limit(1000));
			keys.addAll(page.getKeys());
			cursor = page;
		}
		while (!cursor.isFinished());
		return keys;
	}

	private static long serverMillis(RedisCommands<String, String> redis) {
		List<String> time = redis.time();
		return Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
	}

	/**
	 * A new connection each time, to the master of the moment (a failover moves it, a
	 * restart breaks the one before), on one client for the run: starting a client takes
	 * seconds, and the change must start when the fault says it does.
	 */
	@Override
	public void connect() {
		closeConnection();
		if (this.client == null) {
			this.client = RedisClient.create();
		}
		int port = (this.store instanceof ReplicatedStore replicated) ? replicated.primaryPort() : this.store.port();
		this.connection = this.client.connect(
				RedisURI.builder().withHost("127.0.0.1").withPort(port).withTimeout(Duration.ofSeconds(5)).build());
	}

	private <T> T call(RedisCall<T> call) {
		return call.on(this.connection.sync());
	}

	private void closeConnection() {
		if (this.connection != null) {
			this.connection.close();
			this.connection = null;
		}
	}

	@Override
	public void close() {
		closeConnection();
		if (this.client != null) {
			this.client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
			this.client = null;
		}
	}

	@FunctionalInterface
	private interface RedisCall<T> {

		T on(RedisCommands<String, String> redis);

	}

	private record Key(String name, byte[] dump, long expiresAt) {
	}

	private record Keys(List<Key> keys, long takenAt) implements Copy {

		@Override
		public int size() {
			return this.keys.size();
		}

	}

}
