package io.github.leaderelection.benchmarks;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.RunRecords;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.spi.LeaseStore;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import net.javacrumbs.shedlock.provider.redis.spring.RedisLockProvider;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Figure 6: what a leader-only scheduled run costs in the store, one run after another on
 * one thread. Ours: one leader (an engine with one group, the default timings) claims the
 * next tick of a job in the group's run records and records its end, SUCCEEDED. ShedLock:
 * its lock provider on the same store takes the job's lock (the same name every run,
 * {@code lockAtMostFor} 10 s, {@code lockAtLeastFor} zero) and releases it, as a
 * {@code @SchedulerLock} method that finds the lock free does around its work. The work
 * itself is empty, so the figure is the bookkeeping's cost.
 */
final class Runs {

	static final List<Store> STORES = List.of(Store.H2, Store.MARIADB, Store.POSTGRESQL, Store.REDIS, Store.ZOOKEEPER,
			Store.ETCD);

	static final String GROUP = "bench-runs";

	static final String JOB = "bench-job";

	static final String LOCK = "bench-run";

	/** The job's period as far as the ticks go: each run claims the tick after. */
	static final long TICK_MS = 1000;

	static final Duration LOCK_AT_MOST_FOR = Duration.ofSeconds(10);

	/** Runs of one side before the other's turn. */
	static final int BLOCK = 50;

	/** Runs of a side before its server requests are counted. */
	static final int COUNT_WARM_UP = 50;

	private Runs() {
	}

	/**
	 * Measures this starter and, where ShedLock has a provider here, ShedLock on the
	 * store. First the requests per run the server counts, each alone ({@code runs / 5}
	 * runs); then the time per run, both open at once and measured in alternating blocks
	 * of {@link #BLOCK} runs, so that the load of the machine, which other work shares,
	 * falls on both alike.
	 * @param warmUp runs of each before the timed ones, not counted
	 * @param runs runs of each timed
	 */
	static Map<String, Object> run(Store store, int warmUp, int runs) throws Exception {
		Map<String, Object> row = new LinkedHashMap<>();
		row.put("store", store.id());
		row.put("label", store.label);
		row.put("warmUpRuns", warmUp);
		row.put("runs", runs);
		row.put("block", BLOCK);
		row.put("counter", StoreAdmin.requestCounter(store));
		String missing = shedLockMissing(store);
		int counted = Math.max(1, runs / 5);
		double oursRequests = requestsPerRun(store, () -> ours(store), counted);
		double theirRequests = (missing != null) ? Double.NaN : requestsPerRun(store, () -> shedLock(store), counted);
		List<Side> sides = new ArrayList<>();
		try {
			sides.add(ours(store));
			if (missing == null) {
				sides.add(shedLock(store));
			}
			List<Map<String, Object>> figures = time(sides, warmUp, runs);
			figures.get(0).put("serverRequestsPerRun", oursRequests);
			figures.get(0).put("leaderThroughout", ((Ours) sides.get(0)).leaderThroughout());
			row.put("ours", figures.get(0));
			if (missing != null) {
				row.put("shedLock", null);
				row.put("shedLockNote", missing);
			}
			else {
				figures.get(1).put("serverRequestsPerRun", theirRequests);
				row.put("shedLock", figures.get(1));
			}
		}
		finally {
			for (Side side : sides) {
				side.close();
			}
		}
		return row;
	}

	/**
	 * Why ShedLock is not measured on the store, or null when it is: its ZooKeeper and
	 * etcd providers are not served at 7.10.1 by the registry the build resolves from.
	 */
	static String shedLockMissing(Store store) {
		return switch (store) {
			case ZOOKEEPER -> "shedlock-provider-zookeeper-curator 7.10.1 is not served by the registry the build "
					+ "uses (the newest it serves is 4.42.0)";
			case ETCD -> "shedlock-provider-etcd-jetcd is not served by the registry the build uses";
			default -> null;
		};
	}

	/** One contender, open on a store: a run at a time. */
	interface Side extends AutoCloseable {

		/**
		 * Runs once; returns false when the run was refused (claimed or locked
		 * elsewhere).
		 */
		boolean run() throws Exception;

		@Override
		void close();

	}

	interface Opener {

		Side open() throws Exception;

	}

	/** This starter: one engine that leads one group, and the group's run records. */
	static final class Ours implements Side {

		private final List<Object> resources;

		private final LeaderElectionEngine engine;

		private final LeaderElection election;

		private final RunRecords records;

		private long tick;

		private boolean lostLeadership;

		private boolean closed;

		Ours(Store store, List<Object> resources, LeaderElectionEngine engine) throws Exception {
			this.resources = resources;
			this.engine = engine;
			this.election = engine.join(GROUP);
			engine.start();
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
			while (!this.election.isLeader()) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("Not leader of " + GROUP + " within 60 s on " + store.label);
				}
				Thread.sleep(10);
			}
			this.records = this.election.runRecords()
				.orElseThrow(() -> new IllegalStateException(store.label + " keeps no run records"));
			// The next tick after any an earlier opening left.
			this.tick = Math.max(System.currentTimeMillis(), this.records.lastRun(JOB).map(RunRecord::tick).orElse(0L));
		}

		@Override
		public boolean run() {
			this.tick += TICK_MS;
			Optional<RunRecord> run = this.records.claim(JOB, this.tick, Instant.now(), Duration.ZERO);
			if (run.isEmpty()) {
				this.lostLeadership |= !this.election.isLeader();
				return false;
			}
			// the job's work: nothing
			return this.records.finish(run.get(), RunOutcome.SUCCEEDED, Instant.now());
		}

		boolean leaderThroughout() {
			return !this.lostLeadership && this.election.isLeader();
		}

		@Override
		public void close() {
			if (!this.closed) {
				this.closed = true;
				this.engine.close();
				this.resources.forEach(Participants::closeQuietly);
			}
		}

	}

	static Ours ours(Store store) throws Exception {
		List<Object> resources = new ArrayList<>();
		try {
			LeaseStore lease = Participants.leaseStore(store, Timing.DEFAULTS, resources);
			LeaderElectionEngine engine = LeaderElectionEngine.builder(lease)
				.candidateId("runs-" + ProcessHandle.current().pid())
				.timing(Timing.DEFAULTS.election())
				.shutdownTimeout(Duration.ofSeconds(5))
				.build();
			return new Ours(store, resources, engine);
		}
		catch (Exception | Error ex) {
			resources.forEach(Participants::closeQuietly);
			throw ex;
		}
	}

	/** ShedLock: its lock provider; a run takes the job's lock and releases it. */
	static Side shedLock(Store store) throws Exception {
		List<Object> resources = new ArrayList<>();
		LockProvider provider = lockProvider(store, resources);
		return new Side() {

			@Override
			public boolean run() {
				Optional<SimpleLock> lock = provider
					.lock(new LockConfiguration(Instant.now(), LOCK, LOCK_AT_MOST_FOR, Duration.ZERO));
				if (lock.isEmpty()) {
					return false;
				}
				// the job's work: nothing
				lock.get().unlock();
				return true;
			}

			@Override
			public void close() {
				resources.forEach(Participants::closeQuietly);
				resources.clear();
			}

		};
	}

	/**
	 * ShedLock's provider on the store: on a database the JdbcTemplate provider with
	 * {@code usingDbTime()}, as figure 1; on Redis the Spring Data Redis provider on
	 * Lettuce.
	 */
	private static LockProvider lockProvider(Store store, List<Object> resources) throws Exception {
		if (store.isJdbc()) {
			DataSource dataSource = store.dataSource(2);
			resources.add(dataSource);
			try (Connection connection = dataSource.getConnection();
					Statement statement = connection.createStatement()) {
				// ShedLock's table as its documentation gives it: on PostgreSQL a plain
				// TIMESTAMP (microseconds), since TIMESTAMP(3) rounds an unlock's
				// lock_until up to half a millisecond into the future and a run that
				// follows at once finds the lock still held.
				String timestamp = (store == Store.POSTGRESQL) ? "TIMESTAMP" : "TIMESTAMP(3)";
				statement.execute("CREATE TABLE IF NOT EXISTS " + Store.SHEDLOCK_TABLE + " (name VARCHAR(64) NOT NULL, "
						+ "lock_until " + timestamp + " NOT NULL, locked_at " + timestamp + " NOT NULL, "
						+ "locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))");
			}
			return new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
				.withJdbcTemplate(new JdbcTemplate(dataSource))
				.withTableName(Store.SHEDLOCK_TABLE)
				.usingDbTime()
				.build());
		}
		if (store == Store.REDIS) {
			LettuceConnectionFactory factory = Participants.redis();
			resources.add(factory);
			// Keys under the benchmark's own prefix, so that the clean-up removes them.
			return new RedisLockProvider(factory, "shedlock", Store.REDIS_OURS_PREFIX + "shedlock");
		}
		throw new IllegalArgumentException("No ShedLock provider for " + store.label);
	}

	/**
	 * The requests the server counts per run, the side alone: opens it, runs
	 * {@link #COUNT_WARM_UP} runs, reads the server's counter, runs {@code runs} runs,
	 * closes the side and reads the counter again. Closing first matters on PostgreSQL,
	 * which counts a connection's transactions only when it reports them, at most once a
	 * second while busy and at the latest when it closes; the closing's own requests (a
	 * release of the lease, or none) are counted with the runs.
	 */
	static double requestsPerRun(Store store, Opener opener, int runs) throws Exception {
		if (store == Store.H2) {
			return Double.NaN;
		}
		long before;
		try (Side side = opener.open()) {
			for (int i = 0; i < COUNT_WARM_UP; i++) {
				side.run();
			}
			before = StoreAdmin.sample(store).get("requests");
			for (int i = 0; i < runs; i++) {
				side.run();
			}
		}
		return (settledCount(store) - before) / (double) runs;
	}

	/**
	 * Runs {@code warmUp} runs of each side, then {@code runs} runs of each timed one by
	 * one, in blocks of {@link #BLOCK} that alternate between the sides (the first side
	 * of a round alternates too).
	 * @return the figures of each side, in the order given
	 */
	static List<Map<String, Object>> time(List<Side> sides, int warmUp, int runs) throws Exception {
		int[] refused = new int[sides.size()];
		List<List<Double>> ms = new ArrayList<>();
		long[] nanos = new long[sides.size()];
		for (int s = 0; s < sides.size(); s++) {
			ms.add(new ArrayList<>(runs));
			for (int i = 0; i < warmUp; i++) {
				if (!sides.get(s).run()) {
					refused[s]++;
				}
			}
		}
		for (int done = 0, round = 0; done < runs; done += BLOCK, round++) {
			int block = Math.min(BLOCK, runs - done);
			for (int k = 0; k < sides.size(); k++) {
				int s = (k + round) % sides.size();
				Side side = sides.get(s);
				for (int i = 0; i < block; i++) {
					long t0 = System.nanoTime();
					if (!side.run()) {
						refused[s]++;
					}
					long t = System.nanoTime() - t0;
					nanos[s] += t;
					ms.get(s).add(t / 1e6);
				}
			}
		}
		List<Map<String, Object>> figures = new ArrayList<>();
		for (int s = 0; s < sides.size(); s++) {
			figures.add(figures(ms.get(s), nanos[s] / 1e9, refused[s], Double.NaN));
		}
		return figures;
	}

	/** The server's request count once two readings 500 ms apart agree (5 s at most). */
	private static long settledCount(Store store) throws Exception {
		long count = StoreAdmin.sample(store).get("requests");
		if (store != Store.POSTGRESQL) {
			return count;
		}
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		while (System.nanoTime() < deadline) {
			Thread.sleep(500);
			long again = StoreAdmin.sample(store).get("requests");
			if (again == count) {
				break;
			}
			count = again;
		}
		return count;
	}

	static Map<String, Object> figures(List<Double> ms, double seconds, int refused, double serverRequestsPerRun) {
		Map<String, Object> figures = new LinkedHashMap<>();
		figures.put("meanMs", ms.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN));
		figures.put("p50Ms", Stats.percentile(ms, 50));
		figures.put("p99Ms", Stats.percentile(ms, 99));
		figures.put("maxMs", Stats.max(ms));
		figures.put("runsPerSecond", ms.size() / seconds);
		figures.put("refused", refused);
		figures.put("serverRequestsPerRun", serverRequestsPerRun);
		return figures;
	}

}
