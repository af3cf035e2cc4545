package io.github.leaderelection.chaos;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariConfig;
import io.etcd.jetcd.Client;
import com.zaxxer.hikari.HikariDataSource;
import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.etcd.EtcdLeaseStore;
import io.github.leaderelection.jdbc.JdbcLeaseStore;
import io.github.leaderelection.redis.RedisLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.testing.RedisSentinelServers;
import io.github.leaderelection.zookeeper.ZookeeperLeaseStore;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.SocketOptions;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * One candidate of the experiment, run as its own JVM by the harness: it joins the groups
 * the harness names (one, or many, with balancing or without) through the store the
 * harness names (reached through the harness's proxy), and while it believes it leads one
 * or more of them it performs a leader-only action every 50-100 ms in one of those, drawn
 * at random: some work, a check, and a write to a real database table, fenced by that
 * group's term (reached through a proxy of its own). In its first group it also runs a
 * leader-only job due every second ({@link JobTicker}), each tick claimed once in the
 * store's run records, or, for the control experiment, not claimed at all. It records
 * everything in its {@link EventLog}.
 *
 * <p>
 * Two ways to believe, as a user would write them: {@code library} asks
 * {@link LeaderElection#leadership()} when a job starts and {@link Leadership#isValid()}
 * right before the write; {@code flag} trusts a boolean set by the granted event and
 * cleared by the revoked event (the seed code's way, and the control experiment's). It
 * tells the harness of its grants and revocations on standard output, and exits when
 * standard input closes (the harness is gone).
 */
public final class ChaosNode {

	/** A gap between two probe samples longer than this is a stall of the process. */
	static final long STALL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

	/** How a node decides that it leads. */
	enum BeliefMode {

		/**
		 * {@code leadership()} / {@code isValid()}, the deadline checked at call time.
		 */
		LIBRARY,

		/** A flag flipped by the granted and revoked events. */
		FLAG;

		static BeliefMode of(String value) {
			return valueOf(value.toUpperCase());
		}

		@Override
		public String toString() {
			return name().toLowerCase();
		}

	}

	private final Map<String, String> options;

	private final String key;

	private final BeliefMode belief;

	private final EventLog log;

	private final Deque<AutoCloseable> resources = new ArrayDeque<>();

	private final Object actionMonitor = new Object();

	/**
	 * By group, the term the flag says this node leads in, absent when it does not (flag
	 * mode).
	 */
	private final Map<String, Long> flagTerms = new ConcurrentHashMap<>();

	private volatile boolean running = true;

	/** While this file exists, the leader-only job ignores revocation (rogue-leader). */
	private final Path rogueFile;

	/** By group, the last leadership the job saw, which a rogue job goes on acting on. */
	private final Map<String, Leadership> lastLeadership = new ConcurrentHashMap<>();

	/** The rate the election clock runs at, set by the harness (skew-leader). */
	private final Path clockRateFile;

	/** The engine's threads and its clock, which a fault may skew. */
	private final SkewableScheduler scheduler = new SkewableScheduler();

	/** The leader-only job due every second, in the first group. */
	private volatile JobTicker ticker;

	private ChaosNode(Map<String, String> options) {
		this.options = options;
		this.key = option("key");
		this.belief = BeliefMode.of(option("belief"));
		this.log = new EventLog(Path.of(option("log")));
		this.rogueFile = Path.of(option("rogue-file"));
		this.clockRateFile = Path.of(option("clock-rate-file"));
	}

	public static void main(String[] args) throws Exception {
		new ChaosNode(parse(args)).run();
	}

	private void run() throws Exception {
		Backend backend = Backend.of(option("backend"));
		boolean fencing = Boolean.parseBoolean(option("fencing"));
		ElectionTiming timing = new ElectionTiming(Duration.ofMillis(longOption("lease-ms")),
				Duration.ofMillis(longOption("renew-ms")), Duration.ofMillis(longOption("retry-ms")));
		watchParent();
		FencedTable table = new FencedTable(fenceDataSource(option("fence-url"), option("fence-user")), fencing);
		LeaseStore store = RecordingLeaseStore.of(openStore(backend, option("store"), timing), this.log);
		String candidateId = this.key + "-" + ProcessHandle.current().pid();
		this.log.write("node", EventLog.now(), this.key, ProcessHandle.current().pid(), candidateId, this.belief,
				fencing ? "on" : "off", timing.renewDeadline().toNanos());
		LeaderElectionEngine.Builder builder = LeaderElectionEngine.builder(store)
			.candidateId(candidateId)
			.timing(timing)
			.scheduler(this.scheduler)
			.shutdownTimeout(Duration.ofSeconds(2))
			.watchBeforeLeading(Boolean.parseBoolean(option("watch-before-leading")))
			.listener(new Listener());
		if (Boolean.parseBoolean(option("balance"))) {
			builder.balance(1, Map.of());
		}
		LeaderElectionEngine engine = builder.build();
		Map<String, LeaderElection> elections = new LinkedHashMap<>();
		for (String group : option("groups").split(",")) {
			elections.put(group, engine.join(group));
		}
		// Before the start: the first grant asks it to catch up.
		this.ticker = new JobTicker(elections.values().iterator().next(), Boolean.parseBoolean(option("run-records")),
				this.belief, this.flagTerms, this.log, longOption("work-ms"));
		Runtime.getRuntime().addShutdownHook(new Thread(() -> shutdown(engine), "chaos-shutdown"));
		engine.start();
		this.log.write("ready", EventLog.now());
		System.out.println("ready");
		System.out.flush();
		List<LeaderElection> all = List.copyOf(elections.values());
		daemon("chaos-job", () -> this.ticker.run(() -> this.running));
		daemon("chaos-probe", () -> probe(all));
		daemon("chaos-clock", this::clock);
		daemon("chaos-clock-rate", this::followClockRate);
		act(all, table, longOption("action-period-ms"), longOption("work-ms"));
	}

	/**
	 * Samples {@code leadership()} of every group about every millisecond and records
	 * each change of the term it sees, with the sample of that group before it: the
	 * checker's evidence of what {@code isLeader()} answered. A pause of more than
	 * {@link #STALL_NANOS} between two sweeps is recorded as a stall: the process was not
	 * running (collecting garbage, or waiting for one of the machine's cores), which the
	 * liveness bounds do not count.
	 */
	private void probe(List<LeaderElection> elections) {
		int count = elections.size();
		long[] previousTerm = new long[count];
		long[] p0 = new long[count];
		long[] p1 = new long[count];
		Arrays.fill(p0, EventLog.now());
		System.arraycopy(p0, 0, p1, 0, count);
		long sweepEnd = p0[0];
		while (this.running) {
			long sweepStart = EventLog.now();
			if (sweepStart - sweepEnd > STALL_NANOS) {
				this.log.write("stall", sweepEnd, sweepStart);
			}
			for (int i = 0; i < count; i++) {
				LeaderElection election = elections.get(i);
				long t0 = EventLog.now();
				long term = election.leadership().map(Leadership::term).orElse(0L);
				long t1 = EventLog.now();
				if (term != previousTerm[i]) {
					this.log.write("probe", p0[i], p1[i], t0, t1, previousTerm[i], term, election.group());
					previousTerm[i] = term;
				}
				p0[i] = t0;
				p1[i] = t1;
			}
			sweepEnd = EventLog.now();
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
		}
	}

	/**
	 * Records the wall clock once a second, so that the report shows the clock jumps took
	 * effect.
	 */
	private void clock() {
		while (this.running) {
			this.log.write("clock", EventLog.now(), System.currentTimeMillis());
			sleep(1000);
		}
	}

	/**
	 * Runs the election clock at the rate the harness wrote to the node's rate file, and
	 * records when each rate took effect: the checker measures this node's deadlines on
	 * that clock.
	 */
	private void followClockRate() {
		while (this.running) {
			double rate = readClockRate();
			if (rate != this.scheduler.rate()) {
				long since = this.scheduler.rate(rate);
				this.log.write("rate", since, rate);
			}
			sleep(10);
		}
	}

	private double readClockRate() {
		try {
			return Files.exists(this.clockRateFile) ? Double.parseDouble(Files.readString(this.clockRateFile).trim())
					: 1.0;
		}
		catch (IOException | NumberFormatException ex) {
			return this.scheduler.rate(); // being replaced; next time
		}
	}

	/**
	 * The leader-only job: a check when it starts (which groups does this node lead? one
	 * of them, drawn at random, is the one it acts in), some work, a second check right
	 * before the write, and the write with the term of the leadership that allowed it.
	 */
	private void act(List<LeaderElection> elections, FencedTable table, long periodMillis, long workMillis) {
		while (this.running) {
			sleep(ThreadLocalRandom.current().nextLong(periodMillis, 2 * periodMillis + 1));
			if (this.belief == BeliefMode.LIBRARY) {
				List<Leadership> led = new ArrayList<>();
				for (LeaderElection election : elections) {
					election.leadership().ifPresent(led::add);
				}
				led.forEach((current) -> this.lastLeadership.put(current.group(), current));
				if (Files.exists(this.rogueFile)) {
					actRogue(workMillis, table);
					continue;
				}
				if (led.isEmpty()) {
					continue;
				}
				Leadership leadership = led.get(ThreadLocalRandom.current().nextInt(led.size()));
				synchronized (this.actionMonitor) {
					work(workMillis);
					long c0 = EventLog.now();
					boolean valid = leadership.isValid();
					long c1 = EventLog.now();
					if (valid) {
						write(table, leadership.group(), leadership.term(), c0, c1);
					}
				}
			}
			else {
				List<String> flagged = new ArrayList<>(this.flagTerms.keySet());
				if (flagged.isEmpty()) {
					continue;
				}
				String group = flagged.get(ThreadLocalRandom.current().nextInt(flagged.size()));
				work(workMillis);
				long c0 = EventLog.now();
				Long term = this.flagTerms.get(group);
				long c1 = EventLog.now();
				if (term != null) {
					write(table, group, term, c0, c1);
				}
			}
		}
	}

	/**
	 * The job of a careless user: it acts on the last leadership it saw without asking
	 * whether it still holds, and does not wait for revocations. Only the fence stands
	 * between its writes and the next leader's; they are recorded apart from the actions,
	 * which the checker holds to the belief.
	 */
	private void actRogue(long workMillis, FencedTable table) {
		List<Leadership> seen = new ArrayList<>(this.lastLeadership.values());
		if (seen.isEmpty()) {
			return;
		}
		Leadership last = seen.get(ThreadLocalRandom.current().nextInt(seen.size()));
		work(workMillis);
		long w0 = EventLog.now();
		FencedTable.Outcome outcome = table.write(this.key, last.group(), last.term());
		this.log.write("rogue", w0, EventLog.now(), last.term(), outcome, last.group());
	}

	private void write(FencedTable table, String group, long term, long c0, long c1) {
		long w0 = EventLog.now();
		FencedTable.Outcome outcome = table.write(this.key, group, term);
		long w1 = EventLog.now();
		this.log.write("action", c0, c1, term, w0, w1, outcome, group);
	}

	private static void work(long workMillis) {
		if (workMillis > 0) {
			sleep(ThreadLocalRandom.current().nextLong(workMillis + 1));
		}
	}

	private void shutdown(LeaderElectionEngine engine) {
		engine.close();
		this.running = false;
		this.log.write("exit", EventLog.now());
		while (!this.resources.isEmpty()) {
			try {
				this.resources.pop().close();
			}
			catch (Exception ex) {
				// Exiting anyway.
			}
		}
	}

	/**
	 * Exits when the harness is gone, so that no node outlives a harness that died. An
	 * exit, not a halt: the JDK also closes a child's standard input when it sends it
	 * {@code SIGTERM}, and the shutdown that signal started must go on to release the
	 * lease.
	 */
	private static void watchParent() {
		daemon("chaos-parent", () -> {
			InputStream in = System.in;
			try {
				while (in.read() != -1) {
					// The harness never writes; it only holds the pipe open.
				}
			}
			catch (IOException ex) {
				// Gone as well.
			}
			System.exit(3);
		});
	}

	private final class Listener implements LeaderElectionListener {

		@Override
		public void granted(Leadership leadership) {
			// The time is read before the flag is set and written before it is, so it
			// bounds the flag's belief from below even if the node dies in between.
			ChaosNode.this.log.write("granted", EventLog.now(), leadership.term(), leadership.group());
			ChaosNode.this.flagTerms.put(leadership.group(), leadership.term());
			JobTicker job = ChaosNode.this.ticker;
			if (job != null && job.group().equals(leadership.group())) {
				job.granted();
			}
			announce("leader " + leadership.term() + " " + leadership.group());
		}

		@Override
		public void revoked(Leadership leadership, RevocationReason reason) {
			if (ChaosNode.this.belief == BeliefMode.LIBRARY) {
				// As a careful user does: the job in flight finishes before the
				// revocation is done, so that a shutdown releases the lease only after
				// it.
				synchronized (ChaosNode.this.actionMonitor) {
					ChaosNode.this.flagTerms.remove(leadership.group(), leadership.term());
				}
			}
			else {
				ChaosNode.this.flagTerms.remove(leadership.group(), leadership.term());
			}
			ChaosNode.this.log.write("revoked", EventLog.now(), leadership.term(), reason, leadership.group());
			announce("follower " + leadership.term() + " " + leadership.group());
		}

		/** One line at a time: the listener's threads deliver several groups at once. */
		private void announce(String line) {
			synchronized (System.out) {
				System.out.println(line);
				System.out.flush();
			}
		}

	}

	// Stores, as an application would configure them, with timeouts below the renew
	// deadline

	private LeaseStore openStore(Backend backend, String address, ElectionTiming timing) throws Exception {
		String host = address.substring(0, address.lastIndexOf(':'));
		int port = Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
		return switch (backend) {
			// A replicated MariaDB: through the node's proxy, which leads to the primary.
			case JDBC_MARIADB, JDBC_MARIADB_REPLICA ->
				new JdbcLeaseStore(storeDataSource("jdbc:mariadb://" + address + "/test?connectTimeout=1000", "root"));
			// Both servers, the primary wherever it is; a failover breaks the pool's
			// connections, and new ones find the promoted server.
			case JDBC_POSTGRES_REPLICA -> new JdbcLeaseStore(storeDataSource(
					"jdbc:postgresql://" + address + "/test?targetServerType=primary&connectTimeout=1&loginTimeout=1",
					"postgres"));
			case JDBC_POSTGRES -> new JdbcLeaseStore(storeDataSource(
					"jdbc:postgresql://" + address + "/test?connectTimeout=1&loginTimeout=1", "postgres"));
			case REDIS -> redisStore(new RedisStandaloneConfiguration(host, port), timing);
			case REDIS_SENTINEL ->
				redisStore(new RedisSentinelConfiguration(RedisSentinelServers.MASTER_NAME, Set.of(address)), timing);
			case ZOOKEEPER -> zookeeperStore(address);
			case ETCD -> etcdStore(address);
		};
	}

	private HikariDataSource storeDataSource(String url, String user) {
		HikariConfig config = new HikariConfig();
		config.setPoolName("chaos-store");
		config.setJdbcUrl(url);
		config.setUsername(user);
		config.setPassword("");
		config.setMaximumPoolSize(2);
		config.setMinimumIdle(0);
		// A connection that cannot be had within a second fails the attempt, well within
		// the deadline.
		config.setConnectionTimeout(1000);
		config.setValidationTimeout(250);
		config.setInitializationFailTimeout(-1);
		// Named, not detected: a first connection that breaks while HikariCP asks for the
		// default isolation leaves the pool unable to make any connection ever after
		// (HikariCP #1944; found here by the flap-connections fault).
		config.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
		return closeLater(new HikariDataSource(config));
	}

	/**
	 * The fenced database as the sample application configures it: the server ends a
	 * transaction whose client went quiet after
	 * {@value FencedTable#IDLE_TRANSACTION_SECONDS} s, which releases the fence row's
	 * lock, and a writer waits for that lock 5 s at most.
	 */
	private HikariDataSource fenceDataSource(String url, String user) {
		HikariConfig config = new HikariConfig();
		config.setConnectionInitSql(url.startsWith("jdbc:postgresql:")
				? "SET idle_in_transaction_session_timeout = '" + FencedTable.IDLE_TRANSACTION_SECONDS
						+ "s'; SET lock_timeout = '5s'"
				: "SET SESSION idle_transaction_timeout = " + FencedTable.IDLE_TRANSACTION_SECONDS
						+ ", innodb_lock_wait_timeout = 5");
		config.setPoolName("chaos-fence");
		config.setJdbcUrl(url);
		config.setUsername(user);
		config.setPassword("");
		config.setMaximumPoolSize(1);
		config.setMinimumIdle(0);
		config.setConnectionTimeout(1000);
		config.setValidationTimeout(250);
		config.setInitializationFailTimeout(-1);
		// Named, not detected: a first connection that breaks while HikariCP asks for the
		// default isolation leaves the pool unable to make any connection ever after
		// (HikariCP #1944; found here by the flap-connections fault).
		config.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
		return closeLater(new HikariDataSource(config));
	}

	private LeaseStore redisStore(RedisConfiguration configuration, ElectionTiming timing) {
		// Lettuce reconnects with a backoff that doubles up to 30 s by default: after a
		// Redis restart of T, its first command can wait about T more. A node reconnects
		// within a tenth of a retry period instead, as docs/stores/redis.md advises.
		ClientResources resources = ClientResources.builder()
			.reconnectDelay(Delay.constant(timing.retryPeriod().dividedBy(10)))
			.build();
		closeLater(() -> resources.shutdown());
		LettuceClientConfiguration client = LettuceClientConfiguration.builder()
			.clientResources(resources)
			.commandTimeout(timing.storeCallTimeout())
			.clientOptions(ClientOptions.builder()
				.socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(1)).build())
				.build())
			.build();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration, client);
		factory.afterPropertiesSet();
		factory.start();
		closeLater(factory::destroy);
		return closeLater(new RedisLeaseStore(factory, "chaos:"));
	}

	private LeaseStore zookeeperStore(String address) throws InterruptedException {
		CuratorFramework client = CuratorFrameworkFactory.builder()
			.connectString(address)
			.sessionTimeoutMs((int) longOption("session-ms"))
			.connectionTimeoutMs(1000)
			.retryPolicy(new ExponentialBackoffRetry(50, 5, 500))
			// Otherwise Curator replaces the connect string by the ensemble's servers,
			// bypassing the proxy.
			.ensembleTracker(false)
			.build();
		client.start();
		closeLater(client);
		client.blockUntilConnected(10, TimeUnit.SECONDS);
		return new ZookeeperLeaseStore(client, "/chaos", false);
	}

	private LeaseStore etcdStore(String address) {
		Client client = Client.builder()
			.endpoints("http://" + address)
			.connectTimeout(Duration.ofSeconds(1))
			// Back to the member promptly after a cut, as the Redis client is told to.
			.retryDelay(50)
			.retryMaxDelay(500)
			.build();
		closeLater(client);
		return new EtcdLeaseStore(client, "chaos");
	}

	private <T extends AutoCloseable> T closeLater(T resource) {
		this.resources.push(resource);
		return resource;
	}

	// Plumbing

	private String option(String name) {
		String value = this.options.get(name);
		if (value == null) {
			throw new IllegalArgumentException("Missing option --" + name);
		}
		return value;
	}

	private long longOption(String name) {
		return Long.parseLong(option(name));
	}

	private static Map<String, String> parse(String[] args) {
		Map<String, String> options = new HashMap<>();
		for (int i = 0; i + 1 < args.length; i += 2) {
			if (!args[i].startsWith("--")) {
				throw new IllegalArgumentException("Expected --name value pairs but got '" + args[i] + "'");
			}
			options.put(args[i].substring(2), args[i + 1]);
		}
		return options;
	}

	private static void daemon(String name, Runnable task) {
		Thread thread = new Thread(task, name);
		thread.setDaemon(true);
		thread.start();
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
