package io.github.leaderelection.benchmarks;

import java.io.Closeable;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

import io.etcd.jetcd.Client;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.jdbc.JdbcLeaseStore;
import io.github.leaderelection.redis.RedisLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.etcd.EtcdLeaseStore;
import io.github.leaderelection.zookeeper.ZookeeperLeaseStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.integration.zookeeper.leader.LeaderInitiator;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * The contenders as candidates in a node JVM: this starter, Spring Integration's
 * initiators and the seed documents' SQL.
 */
final class Participants {

	private Participants() {
	}

	static Participant create(Contender contender, String candidateId, List<String> groups, Timing timing,
			Participant.Events events) throws Exception {
		return create(contender, candidateId, groups, timing, 0, events);
	}

	/**
	 * @param balanceWeight this candidate's balancing weight, 0 for no balancing (only
	 * this starter balances)
	 */
	static Participant create(Contender contender, String candidateId, List<String> groups, Timing timing,
			int balanceWeight, Participant.Events events) throws Exception {
		if (balanceWeight > 0 && contender.kind() != Contender.Kind.OURS) {
			throw new IllegalArgumentException(contender + " cannot balance");
		}
		return switch (contender.kind()) {
			case OURS -> new Ours(contender.store(), candidateId, groups, timing, balanceWeight, events);
			case SPRING_INTEGRATION -> (contender.store() == Store.ZOOKEEPER)
					? new SpringIntegrationZookeeper(candidateId, groups, timing, events)
					: new SpringIntegrationLocks(contender.store(), candidateId, groups, timing, events);
			case SEED_SQL -> new SeedSql(contender.store(), candidateId, groups, events);
		};
	}

	/**
	 * This starter's store on the store given, as a node uses it.
	 * @param resources where the clients and pools to close after the store go, in the
	 * order to close them
	 */
	static LeaseStore leaseStore(Store storeKind, Timing timing, List<Object> resources) {
		return switch (storeKind) {
			case MARIADB, POSTGRESQL, H2 -> {
				// The engine's two store threads, and on PostgreSQL the connection
				// that listens.
				DataSource dataSource = storeKind.dataSource(3);
				JdbcLeaseStore jdbc = new JdbcLeaseStore(dataSource, Store.OURS_TABLE);
				resources.add(jdbc); // before the pool: it gives the listening
										// connection back
				resources.add(dataSource);
				jdbc.createTableIfMissing();
				yield jdbc;
			}
			case REDIS -> {
				LettuceConnectionFactory factory = redis();
				RedisLeaseStore redis = new RedisLeaseStore(factory, Store.REDIS_OURS_PREFIX);
				resources.add(redis);
				resources.add(factory);
				yield redis;
			}
			case ETCD -> {
				Client client = Client.builder().endpoints(Store.etcdEndpoint()).build();
				resources.add(client);
				yield new EtcdLeaseStore(client, Store.ETCD_OURS_NAMESPACE);
			}
			case ZOOKEEPER -> {
				CuratorFramework client = curator(timing);
				resources.add(client);
				yield new ZookeeperLeaseStore(client, Store.ZK_OURS_BASE, false);
			}
		};
	}

	static LettuceConnectionFactory redis() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(Store.redisHost(), Store.redisPort()));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	static CuratorFramework curator(Timing timing) {
		CuratorFramework client = CuratorFrameworkFactory.newClient(Store.zookeeperConnect(), (int) timing.leaseMs(),
				5000, new ExponentialBackoffRetry(100, 3));
		client.start();
		return client;
	}

	static void closeQuietly(Object resource) {
		try {
			if (resource instanceof AutoCloseable closeable) {
				closeable.close();
			}
			else if (resource instanceof LettuceConnectionFactory factory) {
				factory.destroy();
			}
		}
		catch (Exception ex) {
			// closing down anyway
		}
	}

	/** This starter: one engine per candidate, all groups on its fixed threads. */
	static final class Ours implements Participant {

		private final LeaderElectionEngine engine;

		private final CountingLeaseStore store;

		private final List<LeaderElection> elections = new ArrayList<>();

		private final List<Object> resources = new ArrayList<>();

		private final Events events;

		Ours(Store storeKind, String candidateId, List<String> groups, Timing timing, int balanceWeight,
				Events events) {
			this.events = events;
			LeaseStore lease = leaseStore(storeKind, timing, this.resources);
			this.store = new CountingLeaseStore(lease, events);
			LeaderElectionEngine.Builder builder = LeaderElectionEngine.builder(this.store);
			if (balanceWeight > 0) {
				builder.balance(balanceWeight, Map.of());
			}
			this.engine = builder.candidateId(candidateId)
				.timing(timing.election())
				.shutdownTimeout(Duration.ofSeconds(5))
				.listener(new LeaderElectionListener() {
					@Override
					public void granted(Leadership leadership) {
						events.granted(leadership.group());
					}

					@Override
					public void revoked(Leadership leadership, RevocationReason reason) {
						events.revoked(leadership.group(), reason.name());
					}
				})
				.build();
			for (String group : groups) {
				this.elections.add(this.engine.join(group));
			}
		}

		@Override
		public void start() {
			this.engine.start();
		}

		@Override
		public int led() {
			int led = 0;
			for (LeaderElection election : this.elections) {
				if (election.isLeader()) {
					led++;
				}
			}
			return led;
		}

		@Override
		public long storeCalls() {
			return this.store.calls.sum();
		}

		@Override
		public String storeCallsByMethod() {
			return this.store.byMethod();
		}

		@Override
		public Map<String, Integer> leadersByCandidate() {
			return this.engine.leadersByCandidate();
		}

		@Override
		public void close() {
			this.engine.close();
			this.events.released();
			this.resources.forEach(Participants::closeQuietly);
		}

	}

	/** A candidate that reports Spring Integration's callbacks. */
	static final class ReportingCandidate extends DefaultCandidate {

		private final Participant.Events events;

		final Set<String> leading;

		ReportingCandidate(String id, String role, Participant.Events events, Set<String> leading) {
			super(id, role);
			this.events = events;
			this.leading = leading;
		}

		@Override
		public void onGranted(Context ctx) {
			this.leading.add(getRole());
			this.events.granted(getRole());
		}

		@Override
		public void onRevoked(Context ctx) {
			this.leading.remove(getRole());
			this.events.revoked(getRole(), "-");
		}

	}

	/**
	 * Spring Integration's {@link LockRegistryLeaderInitiator}, one per group (each with
	 * its own thread), on a {@link JdbcLockRegistry} or {@link RedisLockRegistry} per
	 * candidate.
	 */
	static final class SpringIntegrationLocks implements Participant {

		private final List<LockRegistryLeaderInitiator> initiators = new ArrayList<>();

		private final Set<String> leading = ConcurrentHashMap.newKeySet();

		private final List<Object> resources = new ArrayList<>();

		private final Events events;

		SpringIntegrationLocks(Store store, String candidateId, List<String> groups, Timing timing, Events events) {
			this.events = events;
			LockRegistry<?> registry;
			if (store.isJdbc()) {
				DataSource dataSource = store.dataSource(2);
				this.resources.add(dataSource);
				DefaultLockRepository repository = new DefaultLockRepository(dataSource, candidateId);
				repository.setPrefix(Store.SI_PREFIX);
				repository.setTransactionManager(new DataSourceTransactionManager(dataSource));
				repository.afterPropertiesSet();
				repository.afterSingletonsInstantiated();
				repository.start();
				this.resources.add((AutoCloseable) repository::close);
				registry = new JdbcLockRegistry(repository, Duration.ofMillis(timing.leaseMs()));
			}
			else {
				LettuceConnectionFactory factory = redis();
				this.resources.add(factory);
				registry = new RedisLockRegistry(factory, Store.REDIS_SI_REGISTRY, Duration.ofMillis(timing.leaseMs()));
			}
			for (String group : groups) {
				LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry,
						new ReportingCandidate(candidateId, group, events, this.leading));
				initiator.setHeartBeatMillis(timing.retryMs());
				initiator.setAutoStartup(false);
				this.initiators.add(initiator);
			}
		}

		@Override
		public void start() {
			this.initiators.forEach(LockRegistryLeaderInitiator::start);
		}

		@Override
		public int led() {
			return this.leading.size();
		}

		@Override
		public void close() {
			this.initiators.forEach(LockRegistryLeaderInitiator::stop);
			this.events.released();
			this.resources.forEach(Participants::closeQuietly);
		}

	}

	/**
	 * Spring Integration's ZooKeeper {@link LeaderInitiator} (Curator LeaderSelector),
	 * one per group.
	 */
	static final class SpringIntegrationZookeeper implements Participant {

		private final CuratorFramework client;

		private final List<LeaderInitiator> initiators = new ArrayList<>();

		private final Set<String> leading = ConcurrentHashMap.newKeySet();

		private final Events events;

		SpringIntegrationZookeeper(String candidateId, List<String> groups, Timing timing, Events events) {
			this.events = events;
			this.client = curator(timing);
			for (String group : groups) {
				LeaderInitiator initiator = new LeaderInitiator(this.client,
						new ReportingCandidate(candidateId, group, events, this.leading), Store.ZK_SI_NAMESPACE);
				initiator.setAutoStartup(false);
				this.initiators.add(initiator);
			}
		}

		@Override
		public void start() {
			this.initiators.forEach(LeaderInitiator::start);
		}

		@Override
		public int led() {
			return this.leading.size();
		}

		@Override
		public void close() {
			this.initiators.forEach(LeaderInitiator::stop);
			this.events.released();
			this.client.close();
		}

	}

	/**
	 * The seed documents' SQL (seed 001, with seed 000's Java loop): every second each
	 * node runs the upsert, then asks "am I leader?" with a SELECT; a leader is replaced
	 * 20 s after it stopped.
	 */
	static final class SeedSql implements Participant {

		static final String UPSERT = "INSERT IGNORE INTO " + Store.SEED_TABLE + " (service_id, leader_id, "
				+ "last_seen_active) VALUES (?, ?, now()) ON DUPLICATE KEY UPDATE "
				+ "leader_id = IF(last_seen_active < now() - INTERVAL 20 SECOND, VALUES(leader_id), leader_id), "
				+ "last_seen_active = IF(leader_id = VALUES(leader_id), VALUES(last_seen_active), last_seen_active)";

		static final String IS_LEADER = "SELECT COUNT(*) AS is_leader FROM " + Store.SEED_TABLE
				+ " WHERE service_id = ? AND leader_id = ?";

		private final DataSource dataSource;

		private final String candidateId;

		private final List<String> groups;

		private final Events events;

		private final Set<String> leading = ConcurrentHashMap.newKeySet();

		private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

		private final AtomicLong calls = new AtomicLong();

		SeedSql(Store store, String candidateId, List<String> groups, Events events) throws Exception {
			if (store != Store.MARIADB) {
				throw new IllegalArgumentException("The seed SQL is MySQL/MariaDB only");
			}
			this.dataSource = store.dataSource(1);
			this.candidateId = candidateId;
			this.groups = groups;
			this.events = events;
			try (Connection connection = this.dataSource.getConnection()) {
				connection.createStatement()
					.execute("CREATE TABLE IF NOT EXISTS " + Store.SEED_TABLE + " (service_id varchar(128) NOT NULL, "
							+ "leader_id varchar(128) NOT NULL, last_seen_active timestamp NOT NULL DEFAULT "
							+ "CURRENT_TIMESTAMP, PRIMARY KEY (service_id)) ENGINE=InnoDB");
			}
		}

		@Override
		public void start() {
			this.scheduler.scheduleAtFixedRate(this::round, 0, 1, TimeUnit.SECONDS);
		}

		private void round() {
			try (Connection connection = this.dataSource.getConnection();
					PreparedStatement upsert = connection.prepareStatement(UPSERT);
					PreparedStatement check = connection.prepareStatement(IS_LEADER)) {
				for (String group : this.groups) {
					upsert.setString(1, group);
					upsert.setString(2, this.candidateId);
					upsert.executeUpdate();
					check.setString(1, group);
					check.setString(2, this.candidateId);
					boolean leader;
					try (ResultSet rows = check.executeQuery()) {
						leader = rows.next() && rows.getInt(1) > 0;
					}
					this.calls.addAndGet(2);
					if (leader && this.leading.add(group)) {
						this.events.granted(group);
					}
					else if (!leader && this.leading.remove(group)) {
						this.events.revoked(group, "-");
					}
				}
			}
			catch (Exception ex) {
				System.err.println("seed round failed: " + ex);
			}
		}

		@Override
		public int led() {
			return this.leading.size();
		}

		@Override
		public long storeCalls() {
			return this.calls.get();
		}

		@Override
		public void close() throws Exception {
			this.scheduler.shutdownNow();
			this.scheduler.awaitTermination(5, TimeUnit.SECONDS);
			((Closeable) this.dataSource).close();
		}

	}

}
