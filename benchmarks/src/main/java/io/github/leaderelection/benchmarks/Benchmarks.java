package io.github.leaderelection.benchmarks;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

import io.github.leaderelection.testing.ChildJvm;
import io.github.leaderelection.testing.EtcdServer;
import io.github.leaderelection.testing.MariaDbServer;
import io.github.leaderelection.testing.StoreServer;
import org.h2.tools.Server;

/**
 * Runs every figure in one go and writes {@code results.json} and {@code results.md} next
 * to the jar ({@code benchmarks/target/}).
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar quick|full [--only=gate,failover,load,scale,balance,runs]
 *     [--contenders=ours-redis,...] [--groups=10,1000,10000] [--balance-groups=100] [--balance-nodes=4]
 * </pre>
 *
 * {@code --groups} sets the group counts of the scale figure for every contender chosen
 * (by default this starter at 10 and 1,000, Spring Integration at 10).
 */
public final class Benchmarks {

	static final List<String> FAILOVER = List.of("ours-mariadb", "ours-postgresql", "ours-h2", "ours-redis",
			"ours-zookeeper", "ours-etcd", "si-mariadb", "si-postgresql", "si-redis", "si-zookeeper");

	static final List<String> LOAD = List.of("ours-mariadb", "si-mariadb", "seed-mariadb", "ours-postgresql",
			"si-postgresql", "ours-redis", "si-redis", "ours-zookeeper", "si-zookeeper", "ours-etcd");

	/** Figure 5: where balancing is measured unless --contenders says otherwise. */
	static final List<String> BALANCE = List.of("ours-redis", "ours-mariadb", "ours-postgresql", "ours-zookeeper",
			"ours-etcd");

	private Benchmarks() {
	}

	public static void main(String[] args) throws Exception {
		if (args.length == 0 || !Set.of("quick", "full").contains(args[0])) {
			System.err.println("Usage: java -jar benchmarks/target/benchmarks.jar quick|full "
					+ "[--only=gate,failover,load,scale,balance,runs] [--contenders=ours-redis,...] "
					+ "[--groups=10,1000,10000] [--balance-groups=100] [--balance-nodes=4]");
			System.exit(2);
		}
		boolean full = args[0].equals("full");
		Set<String> sections = Set.of("gate", "failover", "load", "scale", "balance", "runs");
		List<String> contenders = null;
		List<Integer> scaleGroups = null;
		int balanceGroups = 100;
		int balanceNodes = 4;
		for (String arg : Arrays.copyOfRange(args, 1, args.length)) {
			if (arg.startsWith("--only=")) {
				sections = Set.of(arg.substring(7).split(","));
			}
			else if (arg.startsWith("--contenders=")) {
				contenders = List.of(arg.substring(13).split(","));
			}
			else if (arg.startsWith("--groups=")) {
				scaleGroups = Arrays.stream(arg.substring(9).split(",")).map(Integer::valueOf).toList();
			}
			else if (arg.startsWith("--balance-groups=")) {
				balanceGroups = Integer.parseInt(arg.substring(17));
			}
			else if (arg.startsWith("--balance-nodes=")) {
				balanceNodes = Integer.parseInt(arg.substring(16));
			}
			else {
				System.err.println("Unknown option " + arg);
				System.exit(2);
			}
		}
		Path target = targetDirectory();
		Path logDir = target.resolve("bench-logs");
		Map<String, Object> results = new LinkedHashMap<>();
		results.put("mode", full ? "full" : "quick");
		results.put("started", Instant.now().toString());
		results.put("command", "java -jar benchmarks/target/benchmarks.jar " + String.join(" ", args));
		results.put("machine", machine());
		List<Map<String, Object>> load = new ArrayList<>();
		results.put("uptime", load);
		long began = System.nanoTime();
		ZookeeperServer zookeeper = null;
		EtcdServer etcd = null;
		Server h2 = null;
		MariaDbServer mariadb = null;
		try {
			if (System.getProperty("bench.mariadb.url") == null) {
				// A server of its own, so that its status counters count the benchmark's
				// statements only: default settings but a small buffer pool.
				mariadb = new MariaDbServer(target.resolve("bench-mariadb"),
						List.of("--innodb-buffer-pool-size=64M", "--skip-log-bin", "--max-connections=300"));
				mariadb.start();
				Coordinates.set("bench.mariadb.url", mariadb.url(StoreServer.DATABASE));
			}
			h2 = Server.createTcpServer("-tcpPort", "0", "-ifNotExists").start();
			Coordinates.set("bench.h2.url", "jdbc:h2:tcp://127.0.0.1:" + h2.getPort() + "/mem:bench;DB_CLOSE_DELAY=-1");
			zookeeper = ZookeeperServer.start(logDir);
			Coordinates.set("bench.zookeeper.connect", "127.0.0.1:" + zookeeper.port);
			etcd = new EtcdServer(target.resolve("bench-etcd"));
			etcd.start();
			Coordinates.set("bench.etcd.endpoint", etcd.endpoint());
			StoreAdmin.setUpPostgres();
			results.put("versions", versions());
			Map<String, Object> settings = new LinkedHashMap<>();
			settings.put("failoverTiming", Timing.FAILOVER.toString());
			settings.put("storeLoadTiming", Timing.FAILOVER.toString());
			settings.put("scaleTiming", Timing.DEFAULTS.toString());
			settings.put("balanceTiming", Timing.DEFAULTS.toString());
			settings.put("runsTiming", Timing.DEFAULTS.toString());
			settings.put("runsShedLock",
					"lock name the same every run, lockAtMostFor " + Runs.LOCK_AT_MOST_FOR.toSeconds()
							+ " s, lockAtLeastFor 0; JDBC: JdbcTemplateLockProvider "
							+ "usingDbTime(); Redis: RedisLockProvider (Spring Data Redis, Lettuce)");
			settings
				.put("comparableSettings", "SI lock registries: TTL / expireAfter = lease-duration, heartBeatMillis = "
						+ "retry-period, busyWait 50 ms and idleBetweenTries 100 ms (defaults); SI ZooKeeper and our "
						+ "ZooKeeper store: Curator session timeout = lease-duration (server tick 500 ms)");
			settings.put("nodeJvmOptions", String.join(" ", NodeProcess.JVM_OPTIONS));
			settings.put("failoverNodeJvmOptions", String.join(" ", NodeProcess.FAILOVER_JVM_OPTIONS));
			results.put("settings", settings);

			if (sections.contains("gate")) {
				section("gate", load, () -> results.put("gate", Gate.run(full)));
			}
			if (sections.contains("failover")) {
				int trials = full ? 20 : 2;
				List<Map<String, Object>> rows = new ArrayList<>();
				results.put("failover", rows);
				for (String id : pick(FAILOVER, contenders)) {
					section("failover " + id, load,
							() -> rows.add(new Failover(Contender.parse(id), Timing.FAILOVER, logDir).run(trials)));
				}
			}
			if (sections.contains("load")) {
				List<Map<String, Object>> rows = new ArrayList<>();
				results.put("storeLoad", rows);
				for (String id : pick(LOAD, contenders)) {
					section("store load " + id, load, () -> rows.add(StoreLoad.run(Contender.parse(id), Timing.FAILOVER,
							full ? 5000 : 2000, full ? 5000 : 2000, full ? 30000 : 5000, logDir)));
				}
			}
			if (sections.contains("scale")) {
				List<Map<String, Object>> rows = new ArrayList<>();
				results.put("scale", rows);
				// Each of our stores at 10 and at 1,000 groups, so that its threads can
				// be compared with themselves; Spring Integration at 10 only (a thread
				// per group).
				List<Object[]> runs = new ArrayList<>();
				if (scaleGroups != null && contenders != null) {
					// As asked, in the order asked.
					for (String id : contenders) {
						for (int count : scaleGroups) {
							runs.add(new Object[] { id, count });
						}
					}
				}
				else {
					for (String ours : List.of("ours-mariadb", "ours-postgresql", "ours-redis", "ours-zookeeper",
							"ours-etcd")) {
						for (int count : (scaleGroups != null) ? scaleGroups : List.of(10, 1000)) {
							runs.add(new Object[] { ours, count });
						}
					}
					runs.add(new Object[] { "si-mariadb", 10 });
				}
				for (Object[] run : runs) {
					String id = (String) run[0];
					if (contenders != null && !contenders.contains(id)) {
						continue;
					}
					section("scale " + id + " x " + run[1], load, () -> rows.add(Scale.run(Contender.parse(id),
							(Integer) run[1], Timing.DEFAULTS, full ? 30000 : 5000, logDir)));
				}
			}
			if (sections.contains("balance")) {
				List<Map<String, Object>> rows = new ArrayList<>();
				results.put("balance", rows);
				int groups = balanceGroups;
				int nodes = balanceNodes;
				for (String id : pick(BALANCE, contenders)) {
					section("balance " + id + " (" + groups + " groups, " + nodes + " nodes)", load,
							() -> rows.add(Balance.run(Contender.parse(id), groups, nodes, Timing.DEFAULTS, logDir)));
				}
			}
			if (sections.contains("runs")) {
				List<Map<String, Object>> rows = new ArrayList<>();
				results.put("runs", rows);
				int warmUp = full ? 2000 : 200;
				int runs = full ? 10000 : 1000;
				for (Store store : Runs.STORES) {
					if (contenders != null && !contenders.contains("ours-" + store.id())) {
						continue;
					}
					section("runs " + store.id() + " (" + runs + " runs)", load,
							() -> rows.add(Runs.run(store, warmUp, runs)));
				}
			}
		}
		finally {
			StoreAdmin.cleanUp();
			if (zookeeper != null) {
				zookeeper.close();
			}
			if (etcd != null) {
				etcd.close();
			}
			if (h2 != null) {
				h2.stop();
			}
			if (mariadb != null) {
				mariadb.close();
			}
		}
		results.put("durationSeconds", (System.nanoTime() - began) / 1e9);
		results.put("goals", Report.goals(results));
		Files.writeString(target.resolve("results.json"), Json.write(results));
		Files.writeString(target.resolve("results.md"), Report.markdown(results));
		System.err.println("Wrote " + target.resolve("results.json") + " and results.md in "
				+ Math.round((System.nanoTime() - began) / 1e9) + " s");
		System.exit(0);
	}

	interface Section {

		void run() throws Exception;

	}

	private static void section(String name, List<Map<String, Object>> load, Section section) {
		Map<String, Object> entry = new LinkedHashMap<>();
		entry.put("section", name);
		entry.put("before", uptime());
		System.err.println("== " + name + " (" + entry.get("before") + ")");
		long start = System.nanoTime();
		try {
			section.run();
		}
		catch (Exception ex) {
			entry.put("error", ex.toString());
			System.err.println("  FAILED: " + ex);
			ex.printStackTrace();
		}
		entry.put("after", uptime());
		entry.put("seconds", (System.nanoTime() - start) / 1e9);
		load.add(entry);
	}

	private static List<String> pick(List<String> all, List<String> wanted) {
		return (wanted == null) ? all : all.stream().filter(wanted::contains).toList();
	}

	/** Where the jar is: benchmarks/target when run as documented. */
	private static Path targetDirectory() throws Exception {
		Path jar = Paths.get(Benchmarks.class.getProtectionDomain().getCodeSource().getLocation().toURI());
		Path dir = Files.isDirectory(jar) ? jar.getParent() : jar.getParent();
		Files.createDirectories(dir);
		return dir;
	}

	static String uptime() {
		return command("uptime").trim().replaceAll("\\s+", " ");
	}

	static String command(String... command) {
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			process.waitFor();
			return output;
		}
		catch (Exception ex) {
			return "(" + ex.getMessage() + ")";
		}
	}

	private static Map<String, Object> machine() throws Exception {
		Map<String, Object> machine = new LinkedHashMap<>();
		machine.put("nproc", Runtime.getRuntime().availableProcessors());
		String memTotal = Files.readAllLines(Path.of("/proc/meminfo"))
			.stream()
			.filter((line) -> line.startsWith("MemTotal"))
			.findFirst()
			.orElse("")
			.replaceAll("\\s+", " ");
		machine.put("memory", memTotal);
		String cpu = Files.readAllLines(Path.of("/proc/cpuinfo"))
			.stream()
			.filter((line) -> line.startsWith("model name"))
			.findFirst()
			.map((line) -> line.substring(line.indexOf(':') + 1).trim())
			.orElse("");
		machine.put("cpu", cpu);
		machine.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
		machine.put("jdk", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
		machine.put("coordinatorJvmArgs", ManagementFactory.getRuntimeMXBean().getInputArguments());
		return machine;
	}

	private static Map<String, Object> versions() {
		Map<String, Object> versions = new TreeMap<>();
		String classPath = System.getProperty("java.class.path");
		Path jar = Path.of(classPath.split(java.io.File.pathSeparator)[0]);
		Path lib = jar.toAbsolutePath().getParent().resolve("lib");
		List<String> wanted = List.of("leader-election-core", "shedlock-spring", "shedlock-provider-jdbc-template",
				"shedlock-provider-redis-spring", "spring-integration-core", "spring-integration-jdbc",
				"spring-integration-redis", "spring-integration-zookeeper", "curator-recipes", "zookeeper",
				"jetcd-core", "lettuce-core", "spring-data-redis", "spring-core", "spring-boot", "mariadb-java-client",
				"postgresql", "h2", "HikariCP", "jmh-core");
		try (var files = Files.list(lib)) {
			for (String name : files.map((p) -> p.getFileName().toString()).sorted().toList()) {
				for (String artifact : wanted) {
					if (name.startsWith(artifact + "-")
							&& name.substring(artifact.length() + 1).matches("\\d.*\\.jar")) {
						versions.put(artifact, name.substring(artifact.length() + 1, name.length() - 4));
					}
				}
			}
		}
		catch (Exception ex) {
			versions.put("libraries", "unknown: " + ex);
		}
		versions.put("server MariaDB (figures 2-4)",
				query(Store.MARIADB, "SELECT VERSION()") + " at " + Store.mariadbUrl());
		try (Connection connection = DriverManager.getConnection(Store.sharedMariadbUrl(), Store.mariadbUser(),
				Store.mariadbPassword());
				Statement statement = connection.createStatement();
				ResultSet rows = statement.executeQuery("SELECT VERSION()")) {
			versions.put("server MariaDB (ShedLock, figure 1)",
					(rows.next() ? rows.getString(1) : "?") + " at " + Store.sharedMariadbUrl());
		}
		catch (Exception ex) {
			versions.put("server MariaDB (ShedLock, figure 1)", "unreachable: " + ex.getMessage());
		}
		versions.put("server PostgreSQL", query(Store.POSTGRESQL, "SHOW server_version"));
		try {
			Map<String, Long> ignored = StoreAdmin.sample(Store.ZOOKEEPER);
			versions.put("server ZooKeeper", "curator-test TestingServer, ZooKeeper " + versions.get("zookeeper"));
		}
		catch (Exception ex) {
			versions.put("server ZooKeeper", "unreachable: " + ex);
		}
		versions.put("server etcd", command("etcd", "--version").lines().findFirst().orElse("?").trim()
				+ " (a member of its own; heartbeat 20 ms, election 200 ms)");
		versions
			.put("server Redis",
					command("redis-cli", "-h", Store.redisHost(), "-p", Integer.toString(Store.redisPort()), "info",
							"server")
						.lines()
						.filter((l) -> l.startsWith("redis_version"))
						.findFirst()
						.orElse("?")
						.trim());
		return versions;
	}

	private static String query(Store store, String sql) {
		try (Connection connection = StoreAdmin.connect(store);
				Statement statement = connection.createStatement();
				ResultSet rows = statement.executeQuery(sql)) {
			return rows.next() ? rows.getString(1) : "?";
		}
		catch (Exception ex) {
			return "unreachable: " + ex.getMessage();
		}
	}

	/** The ZooKeeper server JVM. */
	static final class ZookeeperServer implements AutoCloseable {

		final ChildJvm jvm;

		final int port;

		private ZookeeperServer(ChildJvm jvm, int port) {
			this.jvm = jvm;
			this.port = port;
		}

		static ZookeeperServer start(Path logDir) throws Exception {
			Files.createDirectories(logDir);
			CompletableFuture<Integer> ready = new CompletableFuture<>();
			ChildJvm jvm = ChildJvm.start("zookeeper-server",
					ChildJvm.command(
							List.of("-Xmx256m", "-XX:+UseSerialGC", "-Dlogback.configurationFile=logback-node.xml"),
							ZookeeperServerMain.class, List.of()),
					Map.of(), logDir.resolve("zookeeper-server.log"), (line) -> {
						if (line == null) {
							ready.completeExceptionally(
									new IllegalStateException("The ZooKeeper server did not start; see " + logDir));
						}
						else if (line.startsWith("@READY ")) {
							ready.complete(Integer.parseInt(line.substring(7).trim()));
						}
					});
			return new ZookeeperServer(jvm, ready.get());
		}

		@Override
		public void close() throws Exception {
			this.jvm.closeInput();
			if (!this.jvm.awaitExit(10_000)) {
				this.jvm.kill();
			}
		}

	}

	static String joined(List<?> values) {
		return values.stream().map(String::valueOf).collect(Collectors.joining(", "));
	}

}
