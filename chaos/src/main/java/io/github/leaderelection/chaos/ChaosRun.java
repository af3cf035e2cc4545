package io.github.leaderelection.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.stream.Stream;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.jdbc.JdbcLeaseStore;
import io.github.leaderelection.testing.ChildJvm;
import io.github.leaderelection.testing.EtcdServer;
import io.github.leaderelection.testing.MariaDbReplicaServers;
import io.github.leaderelection.testing.MariaDbServer;
import io.github.leaderelection.testing.PostgresReplicaServers;
import io.github.leaderelection.testing.PostgresServer;
import io.github.leaderelection.testing.RedisSentinelServers;
import io.github.leaderelection.testing.RedisServer;
import io.github.leaderelection.testing.ReplicatedStore;
import io.github.leaderelection.testing.StoreServer;
import io.github.leaderelection.testing.TcpProxy;
import io.github.leaderelection.testing.ZookeeperServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * One run of the experiment: starts a store server, a proxy per node and the node
 * processes, injects faults drawn from the seed until the duration or the fault count is
 * reached, stops everything and hands the records to the {@link Checker}.
 *
 * <p>
 * The faults come from a shuffled deck of all the enabled types, reshuffled when empty,
 * so every type comes up equally often; the seed fixes the sequence and every duration,
 * offset and target choice (which process leads at a given moment is up to the election).
 *
 * <p>
 * With several groups every node joins them all (and with balancing spreads their
 * leadership over the live candidates, so that each node leads some). A fault aimed at
 * "the leader" is aimed at the leader of a group drawn at random among those with one; a
 * "follower" is then any other node, which may well lead other groups. Between faults the
 * run waits until every group has a leader.
 */
final class ChaosRun {

	private static final Logger logger = LoggerFactory.getLogger(ChaosRun.class);

	static final String LIBFAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

	/**
	 * How long a fault waits for a leader to target; long, because node JVMs start slowly
	 * on a busy machine.
	 */
	private static final Duration LEADER_WAIT = Duration.ofSeconds(60);

	private static final Duration FIRST_LEADER_WAIT = Duration.ofSeconds(180);

	/**
	 * How long a restore waits for a moment in which no node has become leader of a group
	 * for two retry periods, before it is skipped.
	 */
	private static final Duration RESTORE_QUIET_WAIT = Duration.ofSeconds(15);

	private static final Duration READY_WAIT = Duration.ofMillis(2500);

	/**
	 * How long a node may take to apply a new clock rate: it looks at its rate file every
	 * 10 ms.
	 */
	private static final long CLOCK_RATE_TAKES = 100;

	/**
	 * The node whose wall clock jumps, the only one run under libfaketime: its lock
	 * around every clock call makes a JVM start several times slower, which the other
	 * nodes need not pay.
	 */
	static final int CLOCK_NODE = 0;

	private final ChaosSettings settings;

	private final Random random;

	private final Path directory;

	private final List<FaultType> deck = new ArrayList<>();

	private final List<TcpProxy> proxies = new ArrayList<>();

	/** Per node, its link to the fenced database. */
	private final List<TcpProxy> fenceProxies = new ArrayList<>();

	private final NodeProcess[] nodes;

	private final int[] incarnations;

	private EventLog log;

	private StoreServer store;

	private StoreServer fenceDatabase;

	private String libfaketime;

	/** The {@code lose-store-data} fault, when the run injects it. */
	private LostStoreData lostData;

	ChaosRun(ChaosSettings settings) {
		this.settings = settings;
		this.random = new Random(settings.seed());
		this.directory = settings.directory().toAbsolutePath();
		this.nodes = new NodeProcess[settings.nodes()];
		this.incarnations = new int[settings.nodes()];
	}

	/** Runs the experiment, checks its records, writes the summary and returns it. */
	ChaosSummary run() throws Exception {
		prepareDirectory();
		this.libfaketime = findLibfaketime();
		Thread cleanup = new Thread(this::forceStop, "chaos-cleanup");
		Runtime.getRuntime().addShutdownHook(cleanup);
		try (EventLog log = new EventLog(this.directory.resolve("harness.log"))) {
			this.log = log;
			try {
				startStores();
				log.write("run", EventLog.now(), System.currentTimeMillis(), this.settings.name(),
						this.settings.backend(), this.settings.seed(), this.settings.belief(),
						this.settings.fencing() ? "on" : "off", this.settings.longest().leaseDuration().toNanos(),
						this.settings.longest().renewDeadline().toNanos(),
						this.settings.longest().retryPeriod().toNanos(), this.settings.groups(),
						this.settings.balance() ? "balanced" : "unbalanced");
				for (int i = 0; i < this.nodes.length; i++) {
					this.proxies.add(new TcpProxy(this.store.port()));
					this.fenceProxies.add(new TcpProxy(this.fenceDatabase.port()));
					spawn(i);
				}
				if (!awaitReady(FIRST_LEADER_WAIT)) {
					throw new IllegalStateException(
							"Not every node started within " + FIRST_LEADER_WAIT + "; see " + this.directory);
				}
				if (awaitLeader(FIRST_LEADER_WAIT).isEmpty()) {
					throw new IllegalStateException(
							"No node became leader within " + FIRST_LEADER_WAIT + "; see " + this.directory);
				}
				settle();
				injectFaults();
				log.write("end", EventLog.now());
			}
			finally {
				stopNodes();
				this.proxies.forEach(TcpProxy::close);
				this.fenceProxies.forEach(TcpProxy::close);
				recordWrites();
				closeStores();
			}
		}
		finally {
			Runtime.getRuntime().removeShutdownHook(cleanup);
		}
		ChaosSummary summary = Checker.check(this.directory, this.settings);
		Files.writeString(this.settings.summaryFile(), summary.toJson());
		System.out.println(summary.table());
		if (!summary.lateGaps().isEmpty()) {
			String trace = GapTrace.of(this.directory, summary.lateGaps());
			Files.writeString(this.directory.resolve("late-gaps.txt"), trace);
			System.out.println(trace);
		}
		deleteDataDirectories();
		return summary;
	}

	// Faults

	private void injectFaults() throws Exception {
		long start = System.nanoTime();
		Duration duration = this.settings.duration();
		int injected = 0;
		long minimum = (duration != null) ? duration.toNanos() : 0;
		// At least the duration and at least the fault count; a store that never elects
		// again (every fault then skipped) must not keep the run going for ever.
		long limit = Math.max(3 * minimum, Duration.ofMinutes(10).toNanos());
		while ((System.nanoTime() - start < minimum || injected < this.settings.faults())
				&& System.nanoTime() - start < limit) {
			FaultType type = nextFault();
			if (inject(type)) {
				injected++;
			}
			settle();
		}
		logger.info("Injected {} faults in {} s", injected, (System.nanoTime() - start) / 1_000_000_000L);
	}

	private FaultType nextFault() {
		if (this.deck.isEmpty()) {
			this.settings.faultTypes().stream().sorted().forEach(this.deck::add);
			Collections.shuffle(this.deck, this.random);
		}
		return this.deck.remove(0);
	}

	private boolean inject(FaultType type) throws Exception {
		// Faults last as long as the slowest node needs.
		long lease = this.settings.longest().leaseDuration().toMillis();
		long renew = this.settings.longest().renewDeadline().toMillis();
		long retry = this.settings.longest().retryPeriod().toMillis();
		Optional<NodeProcess> leader = awaitLeader(LEADER_WAIT);
		boolean needsLeader = type != FaultType.RESTART_STORE && type != FaultType.FAILOVER_STORE
				&& type != FaultType.CLOCK_JUMP && type != FaultType.KILL_FOLLOWER && type != FaultType.CUT_FOLLOWER
				&& type != FaultType.SLOW_STORE && type != FaultType.FLAP_CONNECTIONS
				&& type != FaultType.LOSE_STORE_DATA;
		if (needsLeader && leader.isEmpty()) {
			this.log.write("skipped", EventLog.now(), type, "no-leader");
			return false;
		}
		if (this.lostData != null && type != FaultType.LOSE_STORE_DATA) {
			// The copy a later restore writes back: what this fault is about to change.
			this.lostData.copy();
		}
		switch (type) {
			case KILL_LEADER, KILL_FOLLOWER -> {
				NodeProcess node = (type == FaultType.KILL_LEADER) ? leader.get() : randomFollower(leader);
				long t0 = EventLog.now();
				kill(node);
				long t1 = EventLog.now();
				this.log.write("fault", type, t0, t1, node.key(), "-");
				sleep(this.random.nextInt(500));
				spawn(node.index());
			}
			case RESTART_LEADER -> {
				NodeProcess node = leader.get();
				long t0 = EventLog.now();
				boolean clean = node.terminate(10_000);
				long t1 = EventLog.now();
				this.log.write("death", t0, t1, node.key(), clean ? "term" : "kill");
				this.log.write("fault", type, t0, t1, node.key(), clean ? "exited" : "killed-after-10s");
				spawn(node.index());
			}
			case STOP_LEADER, PAUSE_LEADER -> {
				NodeProcess node = leader.get();
				long pause = (type == FaultType.STOP_LEADER) ? lease + retry + this.random.nextInt(600)
						: renew / 5 + this.random.nextInt((int) (renew * 3 / 10));
				long t0 = EventLog.now();
				node.pause();
				sleep(pause);
				node.resume();
				this.log.write("fault", type, t0, EventLog.now(), node.key(), pause + "ms");
			}
			case CUT_LEADER, CUT_FOLLOWER -> {
				NodeProcess node = (type == FaultType.CUT_LEADER) ? leader.get() : randomFollower(leader);
				long cut = renew + 200 + this.random.nextInt(1000);
				TcpProxy proxy = this.proxies.get(node.index());
				long t0 = EventLog.now();
				proxy.cut();
				sleep(cut);
				proxy.heal();
				this.log.write("fault", type, t0, EventLog.now(), node.key(), cut + "ms");
			}
			case SLOW_LEADER -> {
				NodeProcess node = leader.get();
				long latency = 100 + this.random.nextInt(300);
				long length = 800 + this.random.nextInt(1500);
				TcpProxy proxy = this.proxies.get(node.index());
				long t0 = EventLog.now();
				proxy.latency(Duration.ofMillis(latency));
				sleep(length);
				proxy.latency(Duration.ZERO);
				this.log.write("fault", type, t0, EventLog.now(), node.key(), latency + "ms-for-" + length + "ms");
			}
			case SLOW_STORE -> {
				long latency = retry * (35 + this.random.nextInt(16)) / 100;
				long length = 1000 + this.random.nextInt(2000);
				long t0 = EventLog.now();
				this.proxies.forEach((proxy) -> proxy.latency(Duration.ofMillis(latency)));
				sleep(length);
				this.proxies.forEach((proxy) -> proxy.latency(Duration.ZERO));
				this.log.write("fault", type, t0, EventLog.now(), "store", latency + "ms-for-" + length + "ms");
			}
			case FLAP_CONNECTIONS -> {
				long length = 1500 + this.random.nextInt(2000);
				long t0 = EventLog.now();
				int drops = 0;
				while (EventLog.now() - t0 < length * 1_000_000) {
					this.proxies.forEach(TcpProxy::dropConnections);
					drops++;
					sleep(150 + this.random.nextInt(450));
				}
				this.log.write("fault", type, t0, EventLog.now(), "store", drops + "-drops");
			}
			case ROGUE_LEADER -> {
				NodeProcess node = leader.get();
				long cut = renew + 200 + this.random.nextInt(1000);
				TcpProxy proxy = this.proxies.get(node.index());
				Path rogue = rogueFile(node.index());
				long t0 = EventLog.now();
				Files.writeString(rogue, "ignore revocation");
				proxy.cut();
				sleep(cut);
				proxy.heal();
				sleep(lease); // the job goes on while the next leader writes
				Files.deleteIfExists(rogue);
				this.log.write("fault", type, t0, EventLog.now(), node.key(), cut + "ms");
			}
			case SKEW_LEADER -> {
				NodeProcess node = leader.get();
				double rate = this.settings.clockRates().draw(this.random);
				// Long enough for its belief to end on its own clock while cut off.
				long cut = (long) (renew / rate) + 200 + this.random.nextInt(1000);
				TcpProxy proxy = this.proxies.get(node.index());
				Path rateFile = clockRateFile(node.index());
				long t0 = EventLog.now();
				setClockRate(rateFile, rate);
				sleep(CLOCK_RATE_TAKES);
				proxy.cut();
				sleep(cut);
				proxy.heal();
				setClockRate(rateFile, 1.0);
				sleep(CLOCK_RATE_TAKES);
				this.log.write("fault", type, t0, EventLog.now(), node.key(),
						String.format(Locale.ROOT, "rate-%.3f-cut-%dms", rate, cut));
			}
			case HANG_LEADER -> {
				NodeProcess node = leader.get();
				long hang = lease + retry + 1000 + this.random.nextInt(2000);
				TcpProxy storeLink = this.proxies.get(node.index());
				TcpProxy fenceLink = this.fenceProxies.get(node.index());
				long t0 = EventLog.now();
				fenceLink.holdAnswers();
				storeLink.holdAnswers();
				sleep(hang);
				storeLink.heal();
				fenceLink.heal();
				this.log.write("fault", type, t0, EventLog.now(), node.key(), hang + "ms");
			}
			case RESTART_STORE -> {
				boolean crash = this.random.nextBoolean();
				long down = this.random.nextInt((int) (renew * 3 / 2));
				long t0 = EventLog.now();
				this.store.stop(crash);
				sleep(down);
				this.store.restart();
				this.log.write("fault", type, t0, EventLog.now(), "store",
						(crash ? "crash" : "stop") + "-down-" + down + "ms");
			}
			case FAILOVER_STORE -> {
				// The fault ends when the replica is the primary: the nodes may write
				// again. The old primary's return as its replica comes after.
				ReplicatedStore servers = (ReplicatedStore) this.store;
				long t0 = EventLog.now();
				int oldPrimary = servers.failOver(Duration.ofMillis(this.random.nextInt((int) (renew * 3 / 2))));
				if (this.settings.backend().hasNodeLinks()) {
					// The nodes' address now leads to the new primary, as a virtual IP
					// or a database proxy would after a failover.
					this.proxies.forEach((proxy) -> proxy.switchTo(servers.primaryPort()));
				}
				long t1 = EventLog.now();
				this.log.write("fault", type, t0, t1, "store",
						"primary-" + oldPrimary + "-to-" + servers.primaryPort());
				servers.rejoin(oldPrimary);
			}
			case LOSE_STORE_DATA -> {
				LostStoreData.Outcome outcome;
				try {
					outcome = this.lostData.inject(this.settings.groupNames(),
							() -> awaitNoNewLeader(Duration.ofMillis(2 * retry + 200), RESTORE_QUIET_WAIT));
				}
				catch (LostStoreData.NotSettledException ex) {
					this.log.write("skipped", EventLog.now(), type, "no-settled-moment");
					return false;
				}
				catch (Exception ex) {
					logger.warn("Could not change the election's data", ex);
					this.log.write("skipped", EventLog.now(), type, "store-unreachable");
					return false;
				}
				this.log.write("fault", type, outcome.start(), outcome.end(), "store", outcome.detail());
			}
			case CLOCK_JUMP -> {
				int index = CLOCK_NODE;
				long seconds = (60 + this.random.nextInt(6 * 3600 - 60)) * (this.random.nextBoolean() ? 1L : -1L);
				long t0 = EventLog.now();
				setClockOffset(index, seconds);
				this.log.write("fault", type, t0, EventLog.now(), this.nodes[index].key(), seconds + "s");
			}
		}
		return true;
	}

	/**
	 * Whether the nodes lead a group only after following it for a lease duration: in the
	 * runs that lose the store's data, the setting that keeps a node started after the
	 * loss from leading beside the holder of the lost term, unless
	 * {@code -Dchaos.watch-before-leading} says otherwise.
	 */
	private boolean watchBeforeLeading() {
		String setting = System.getProperty("chaos.watch-before-leading", "");
		return setting.isBlank() ? this.settings.faultTypes().contains(FaultType.LOSE_STORE_DATA)
				: Boolean.parseBoolean(setting.trim());
	}

	private Path rogueFile(int index) {
		return this.directory.resolve("rogue-" + index);
	}

	private Path clockRateFile(int index) {
		return this.directory.resolve("clock-rate-" + index);
	}

	/** Written whole, then moved in place: the node never reads half a number. */
	private void setClockRate(Path file, double rate) throws IOException {
		Path next = file.resolveSibling(file.getFileName() + ".next");
		Files.writeString(next, Double.toString(rate));
		Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
	}

	private NodeProcess randomFollower(Optional<NodeProcess> leader) {
		List<NodeProcess> followers = Stream.of(this.nodes)
			.filter((node) -> leader.isEmpty() || node != leader.get())
			.toList();
		return followers.get(this.random.nextInt(followers.size()));
	}

	/**
	 * Waits until a leader is known (with several groups, a leader of every group) and,
	 * for a few seconds at most, until every node runs its election again, then lets the
	 * election run a little. Faults thus usually hit a full cluster one at a time, so
	 * that a failover measures the election rather than how long a restarted JVM takes to
	 * start; on a busy machine, where that takes much longer, the run goes on without it.
	 */
	private void settle() {
		awaitReady(READY_WAIT);
		boolean led = (this.settings.groups() > 1) ? awaitEveryGroupLed(LEADER_WAIT)
				: awaitLeader(LEADER_WAIT).isPresent();
		if (!led) {
			this.log.write("skipped", EventLog.now(), "settle", "no-leader");
		}
		sleep(150 + this.random.nextInt(250));
	}

	/**
	 * Waits until every node has started its election, which takes a while on a busy
	 * machine.
	 */
	private boolean awaitReady(Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!Stream.of(this.nodes).allMatch(NodeProcess::isReady)) {
			boolean failedToStart = Stream.of(this.nodes).anyMatch((node) -> !node.isReady() && !node.isAlive());
			if (failedToStart || System.nanoTime() - deadline > 0) {
				return false;
			}
			sleep(20);
		}
		return true;
	}

	/**
	 * The leader a fault targets: the running node that announced the highest term of a
	 * group and has not announced its revocation; with several groups, of a group drawn
	 * at random among those with such a node.
	 */
	private Optional<NodeProcess> awaitLeader(Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (true) {
			List<String> led = this.settings.groupNames()
				.stream()
				.filter((group) -> leaderOf(group).isPresent())
				.toList();
			if (!led.isEmpty()) {
				String group = (this.settings.groups() > 1) ? led.get(this.random.nextInt(led.size())) : led.get(0);
				Optional<NodeProcess> leader = leaderOf(group);
				if (leader.isPresent()) {
					return leader;
				}
			}
			if (System.nanoTime() - deadline > 0) {
				return Optional.empty();
			}
			sleep(20);
		}
	}

	/**
	 * Waits until no node has announced that it leads a group for the quiet time: by then
	 * every running candidate has read the latest grant of every group, since each reads
	 * every group once per retry period, jitter included, and the quiet time is two of
	 * the longest.
	 */
	private boolean awaitNoNewLeader(Duration quiet, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (true) {
			long now = System.nanoTime();
			long latest = Stream.of(this.nodes)
				.filter((node) -> node != null)
				.mapToLong(NodeProcess::announcedLeaderAt)
				.max()
				.orElse(now);
			if (now - latest >= quiet.toNanos()) {
				return true;
			}
			if (now - deadline > 0) {
				return false;
			}
			sleep(20);
		}
	}

	/** Waits until every group has a leader that announced itself. */
	private boolean awaitEveryGroupLed(Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!this.settings.groupNames().stream().allMatch((group) -> leaderOf(group).isPresent())) {
			if (System.nanoTime() - deadline > 0) {
				return false;
			}
			sleep(20);
		}
		return true;
	}

	private Optional<NodeProcess> leaderOf(String group) {
		return Stream.of(this.nodes)
			.filter((node) -> node != null && node.announcedTerm(group).isPresent())
			.max(Comparator.comparingLong((node) -> node.announcedTerm(group).orElse(0L)));
	}

	// Nodes

	private void spawn(int index) throws IOException {
		String key = "n" + index + "." + this.incarnations[index]++;
		TcpProxy proxy = this.proxies.get(index);
		List<String> arguments = new ArrayList<>();
		Map<String, String> options = new HashMap<>();
		options.put("key", key);
		options.put("backend", this.settings.backend().id());
		options.put("store",
				this.settings.backend().hasNodeLinks() ? "127.0.0.1:" + proxy.port() : this.store.clientAddress());
		// Through the node's own link, so that a fault can hang it mid-transaction.
		options.put("fence-url", this.fenceDatabase.jdbcUrl()
			.replace(":" + this.fenceDatabase.port() + "/", ":" + this.fenceProxies.get(index).port() + "/"));
		options.put("fence-user", this.fenceDatabase.jdbcUser());
		options.put("log", this.directory.resolve("node-" + key + ".log").toString());
		options.put("rogue-file", rogueFile(index).toString());
		options.put("clock-rate-file", clockRateFile(index).toString());
		ElectionTiming timing = this.settings.timing(index);
		options.put("lease-ms", Long.toString(timing.leaseDuration().toMillis()));
		options.put("renew-ms", Long.toString(timing.renewDeadline().toMillis()));
		options.put("retry-ms", Long.toString(timing.retryPeriod().toMillis()));
		// A ZooKeeper lease lasts as long as the session, which must be at least the
		// lease duration.
		options.put("session-ms", Long.toString(zookeeperSessionTimeout(timing).toMillis()));
		options.put("groups", String.join(",", this.settings.groupNames()));
		options.put("balance", Boolean.toString(this.settings.balance()));
		options.put("watch-before-leading", Boolean.toString(watchBeforeLeading()));
		options.put("belief", this.settings.belief().toString());
		options.put("fencing", Boolean.toString(this.settings.fencing()));
		options.put("action-period-ms", "50");
		options.put("work-ms", "20");
		options.put("run-records", Boolean.toString(this.settings.runRecords()));
		options.forEach((name, value) -> {
			arguments.add("--" + name);
			arguments.add(value);
		});
		List<String> command = ChildJvm.command(
				List.of("-Xmx128m", "-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
						"-Djava.io.tmpdir=" + this.directory, "-Dlogback.configurationFile=chaos-node-logback.xml"),
				ChaosNode.class, arguments);
		NodeProcess node = NodeProcess.start(index, key, command, clockEnvironment(index),
				this.directory.resolve("node-" + key + ".err"));
		this.nodes[index] = node;
		this.log.write("spawn", EventLog.now(), key, node.pid());
		node.onUnexpectedExit((exitCode) -> {
			long gone = EventLog.now();
			this.log.write("death", gone, gone, key, "unexpected-" + exitCode);
			logger.error("Node {} exited by itself with code {}; see {}", key, exitCode,
					this.directory.resolve("node-" + key + ".err"));
		});
	}

	/**
	 * The session timeout of the ZooKeeper nodes: at least the lease duration, as the
	 * store requires, with room for the server's rounding to its ticks.
	 */
	static Duration zookeeperSessionTimeout(ElectionTiming timing) {
		return timing.leaseDuration().plusMillis(500);
	}

	private void kill(NodeProcess node) throws InterruptedException {
		long t0 = EventLog.now();
		node.kill();
		this.log.write("death", t0, EventLog.now(), node.key(), "kill");
	}

	/**
	 * Stops every node the way a deployment does: all at once, each releasing what it
	 * holds.
	 */
	private void stopNodes() {
		long t0 = EventLog.now();
		List<NodeProcess> running = Stream.of(this.nodes).filter((node) -> node != null && node.isAlive()).toList();
		running.forEach(NodeProcess::signalTerminate);
		for (NodeProcess node : running) {
			try {
				boolean clean = node.terminate(5000);
				this.log.write("death", t0, EventLog.now(), node.key(), clean ? "end" : "kill");
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/** The test class path when run by Surefire, else this JVM's. */
	// Wall clocks

	private Map<String, String> clockEnvironment(int index) throws IOException {
		if (this.libfaketime == null || index != CLOCK_NODE) {
			return Map.of();
		}
		Path clock = clockFile(index);
		if (!Files.exists(clock)) {
			Files.writeString(clock, "+0s\n");
		}
		// Only the wall clock moves: System.nanoTime() must stay the host's monotonic
		// clock. File times stay true, or class loading slows down further. And no
		// "monotonic fix": libfaketime 0.9.10 turns it on by itself on this glibc, and
		// then every timed wait of the JVM (parkNanos, the VM's periodic tasks) returns
		// at once; the node spun on one and a half of the machine's two cores, and the
		// other JVMs took 10 s to start.
		return Map.of("LD_PRELOAD", this.libfaketime, "FAKETIME_TIMESTAMP_FILE", clock.toString(),
				"FAKETIME_CACHE_DURATION", "1", "FAKETIME_DONT_FAKE_MONOTONIC", "1", "DONT_FAKE_MONOTONIC", "1",
				"NO_FAKE_STAT", "1", "FAKETIME_FORCE_MONOTONIC_FIX", "0");
	}

	private void setClockOffset(int index, long seconds) throws IOException {
		Path clock = clockFile(index);
		Path next = clock.resolveSibling(clock.getFileName() + ".next");
		Files.writeString(next, ((seconds >= 0) ? "+" : "") + seconds + "s\n");
		Files.move(next, clock, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
	}

	private Path clockFile(int index) {
		return this.directory.resolve("clock-n" + index + ".txt");
	}

	private String findLibfaketime() {
		if (Files.isReadable(Path.of(LIBFAKETIME))) {
			return LIBFAKETIME;
		}
		if (this.settings.faultTypes().contains(FaultType.CLOCK_JUMP)) {
			throw new IllegalStateException("The clock-jump fault needs libfaketime at " + LIBFAKETIME
					+ ". Install it, for example with: apt-get install -y faketime");
		}
		return null;
	}

	// Stores

	private void startStores() throws Exception {
		Path storeDirectory = this.directory.resolve("store");
		this.store = switch (this.settings.backend()) {
			case JDBC_MARIADB -> new MariaDbServer(storeDirectory);
			case JDBC_POSTGRES -> new PostgresServer(storeDirectory);
			case REDIS -> new RedisServer(storeDirectory);
			case REDIS_SENTINEL -> new RedisSentinelServers(storeDirectory);
			case JDBC_POSTGRES_REPLICA -> new PostgresReplicaServers(storeDirectory);
			case JDBC_MARIADB_REPLICA -> new MariaDbReplicaServers(storeDirectory);
			case ZOOKEEPER -> new ZookeeperServer(storeDirectory);
			// A restore writes the copy in one transaction, as a snapshot restore
			// replaces the data at once: with 100 groups that is more than etcd's
			// default 128 operations. The store's own batches stay within 128.
			case ETCD -> new EtcdServer(storeDirectory).maxTxnOps(100_000);
		};
		this.store.start();
		if (this.settings.backend().usesJdbcStore()) {
			String url = this.store.jdbcUrl();
			new JdbcLeaseStore(new DriverManagerDataSource(url, this.store.jdbcUser(), "")).createTableIfMissing();
		}
		if (this.settings.backend().isJdbc()) {
			this.fenceDatabase = this.store;
		}
		else {
			// The protected table lives in a database that no fault touches.
			this.fenceDatabase = new MariaDbServer(this.directory.resolve("fence-database"));
			this.fenceDatabase.start();
		}
		FencedTable.create(this.fenceDatabase.jdbcUrl(), this.fenceDatabase.jdbcUser(), this.settings.groupNames());
		if (this.settings.faultTypes().contains(FaultType.LOSE_STORE_DATA)) {
			// The default build's short runs leave the restore out: see docs/safety.md.
			this.lostData = new LostStoreData(StoreData.of(this.settings.backend(), this.store), this.random,
					LostStoreData.Variant.parse(System.getProperty("chaos.lost-data-variants", "")));
		}
	}

	private void recordWrites() {
		if (this.fenceDatabase == null) {
			return;
		}
		try {
			if (!this.fenceDatabase.answers()) {
				this.fenceDatabase.restart();
			}
			for (FencedTable.Write write : FencedTable.readWrites(this.fenceDatabase.jdbcUrl(),
					this.fenceDatabase.jdbcUser())) {
				this.log.write("write", write.id(), write.nodeKey(), write.term(), write.group());
			}
		}
		catch (Exception ex) {
			logger.error("Could not read the fenced table", ex);
			this.log.write("skipped", EventLog.now(), "writes", "unreadable");
		}
	}

	private void closeStores() {
		if (this.lostData != null) {
			try {
				this.lostData.close();
			}
			catch (Exception ex) {
				logger.warn("Could not close the harness's own store client", ex);
			}
			this.lostData = null;
		}
		for (StoreServer server : new StoreServer[] { this.store, this.fenceDatabase }) {
			if (server != null) {
				try {
					server.close();
				}
				catch (Exception ex) {
					logger.warn("Could not stop {}", server, ex);
				}
			}
		}
	}

	/** The JVM is exiting in the middle of a run: leave no process behind. */
	private void forceStop() {
		for (NodeProcess node : this.nodes) {
			if (node != null) {
				try {
					node.kill();
				}
				catch (InterruptedException ex) {
					return;
				}
			}
		}
		closeStores();
	}

	// Files

	private void prepareDirectory() throws IOException {
		if (Files.exists(this.directory)) {
			StoreServer.killLeftovers(this.directory);
			delete(this.directory);
		}
		Files.createDirectories(this.directory);
		Files.deleteIfExists(this.settings.summaryFile());
	}

	/** The servers' data is big and of no use once checked; the records stay. */
	private void deleteDataDirectories() throws IOException {
		// A replicated store keeps a data directory per server, one level down.
		for (String name : new String[] { "store", "store/a", "store/b", "fence-database" }) {
			Path data = this.directory.resolve(name).resolve("data");
			if (Files.exists(data)) {
				delete(data);
			}
		}
	}

	private static void delete(Path root) throws IOException {
		try (Stream<Path> paths = Files.walk(root)) {
			for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
				Files.delete(path);
			}
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

}
