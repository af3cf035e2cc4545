package io.github.leaderelection.benchmarks;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.OnlyOnLeader;
import io.github.leaderelection.aop.OnlyOnLeaderAdvisor;
import io.github.leaderelection.aop.OnlyOnLeaderInterceptor;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.framework.autoproxy.DefaultAdvisorAutoProxyCreator;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Figure 1: the cost of one call of a gated method, in a minimal Spring context with the
 * {@code @OnlyOnLeader} advisor (on an in-memory store, as leader and as follower) or
 * with ShedLock's {@code @SchedulerLock} (JdbcTemplate provider, {@code usingDbTime()},
 * on H2 in memory and on MariaDB), against a plain call. For ShedLock, "runs" is a call
 * that takes the free lock, runs and releases it; "skips" is a call that finds the lock
 * held by another node.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class GateBenchmark {

	static final String GROUP = "gate";

	/**
	 * The work is trivial, so that the figure is the gate's cost; void, as a scheduled
	 * job is.
	 */
	public static class Job {

		private int runs;

		public void work() {
			this.runs++;
		}

		/** Through the proxy, ungated: the target's count. */
		public int runs() {
			return this.runs;
		}

	}

	public static class LeaderOnlyJob {

		private int runs;

		@OnlyOnLeader(group = GROUP)
		public void work() {
			this.runs++;
		}

		/** Through the proxy, ungated: the target's count. */
		public int runs() {
			return this.runs;
		}

	}

	public static class ShedLockJob {

		private int runs;

		@SchedulerLock(name = "bench-gate")
		public void work() {
			this.runs++;
		}

		/** Through the proxy, ungated: the target's count. */
		public int runs() {
			return this.runs;
		}

	}

	public static class ShedLockHeldElsewhereJob {

		private int runs;

		@SchedulerLock(name = "bench-gate-held")
		public void work() {
			this.runs++;
		}

		/** Through the proxy, ungated: the target's count. */
		public int runs() {
			return this.runs;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OnlyOnLeaderConfiguration {

		@Bean
		@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
		static DefaultAdvisorAutoProxyCreator autoProxyCreator() {
			return new DefaultAdvisorAutoProxyCreator();
		}

		@Bean
		@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
		static OnlyOnLeaderInterceptor onlyOnLeaderInterceptor(LeaderElectionEngine engine) {
			OnlyOnLeaderInterceptor interceptor = new OnlyOnLeaderInterceptor(() -> engine, () -> GROUP,
					() -> Duration.ofSeconds(5));
			engine.addListener(interceptor);
			return interceptor;
		}

		@Bean
		@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
		static OnlyOnLeaderAdvisor onlyOnLeaderAdvisor(OnlyOnLeaderInterceptor interceptor) {
			return new OnlyOnLeaderAdvisor(interceptor);
		}

		@Bean
		LeaderOnlyJob leaderOnlyJob() {
			return new LeaderOnlyJob();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableSchedulerLock(defaultLockAtMostFor = "PT30S")
	static class ShedLockConfiguration {

		@Bean
		LockProvider lockProvider(DataSource dataSource) {
			return new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
				.withJdbcTemplate(new JdbcTemplate(dataSource))
				.withTableName(Store.SHEDLOCK_TABLE)
				.usingDbTime()
				.build());
		}

		@Bean
		ShedLockJob shedLockJob() {
			return new ShedLockJob();
		}

		@Bean
		ShedLockHeldElsewhereJob shedLockHeldElsewhereJob() {
			return new ShedLockHeldElsewhereJob();
		}

	}

	@State(Scope.Benchmark)
	public static class Plain {

		final Job job = new Job();

		/**
		 * The same class behind a Spring AOP proxy whose only advice passes the call on:
		 * the floor of any proxy gate.
		 */
		Job proxied;

		@Setup(Level.Trial)
		public void setUp() {
			ProxyFactory factory = new ProxyFactory(new Job());
			factory.setProxyTargetClass(true);
			factory.addAdvice((MethodInterceptor) MethodInvocation::proceed);
			this.proxied = (Job) factory.getProxy();
		}

	}

	/**
	 * A context whose engine leads, or follows a candidate that holds the lease for a
	 * day.
	 */
	public abstract static class OnlyOnLeaderState {

		AnnotationConfigApplicationContext context;

		LeaderElectionEngine engine;

		LeaderElection election;

		LeaderOnlyJob job;

		void setUp(boolean leader) throws InterruptedException {
			InMemoryLeaseStore store = new InMemoryLeaseStore();
			if (!leader) {
				store.tryAcquire(GROUP, "another-node", Duration.ofDays(1), Duration.ofSeconds(1));
			}
			this.engine = LeaderElectionEngine.builder(store).candidateId("this-node").build();
			this.context = new AnnotationConfigApplicationContext();
			this.context.registerBean(LeaderElectionEngine.class, () -> this.engine);
			this.context.register(OnlyOnLeaderConfiguration.class);
			this.context.refresh();
			this.election = this.engine.join(GROUP);
			this.engine.start();
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
			while (System.nanoTime() < deadline
					&& (leader != this.election.isLeader() || this.election.currentLeader().isEmpty())) {
				Thread.sleep(10);
			}
			if (leader != this.election.isLeader()) {
				throw new IllegalStateException("Expected leader=" + leader);
			}
			this.job = this.context.getBean(LeaderOnlyJob.class);
			if (!org.springframework.aop.support.AopUtils.isAopProxy(this.job)) {
				throw new IllegalStateException("The job is not proxied");
			}
			this.job.work();
			if ((this.job.runs() == 1) != leader) {
				throw new IllegalStateException("The gate did not " + (leader ? "run" : "skip") + " the call");
			}
		}

		@TearDown(Level.Trial)
		public void tearDown() {
			this.engine.close();
			this.context.close();
		}

	}

	@State(Scope.Benchmark)
	public static class OnLeader extends OnlyOnLeaderState {

		@Setup(Level.Trial)
		public void setUp() throws InterruptedException {
			setUp(true);
		}

	}

	@State(Scope.Benchmark)
	public static class OnFollower extends OnlyOnLeaderState {

		@Setup(Level.Trial)
		public void setUp() throws InterruptedException {
			setUp(false);
		}

	}

	/**
	 * A ShedLock context on a database, its table created and the "held" lock taken by
	 * another node.
	 */
	public abstract static class ShedLockState {

		HikariDataSource dataSource;

		AnnotationConfigApplicationContext context;

		ShedLockJob job;

		ShedLockHeldElsewhereJob heldElsewhere;

		void setUp(Store store) throws Exception {
			this.dataSource = (HikariDataSource) ((store == Store.H2) ? h2() : Store.sharedMariadb(4));
			String timestamp = "TIMESTAMP(3)";
			try (Connection connection = this.dataSource.getConnection();
					Statement statement = connection.createStatement()) {
				statement.execute("CREATE TABLE IF NOT EXISTS " + Store.SHEDLOCK_TABLE + " (name VARCHAR(64) NOT NULL, "
						+ "lock_until " + timestamp + " NOT NULL, locked_at " + timestamp
						+ " NOT NULL DEFAULT CURRENT_TIMESTAMP(3), locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))");
				statement.execute("DELETE FROM " + Store.SHEDLOCK_TABLE);
				statement.execute("INSERT INTO " + Store.SHEDLOCK_TABLE + " (name, lock_until, locked_at, locked_by) "
						+ "VALUES ('bench-gate-held', TIMESTAMP '2037-01-01 00:00:00', CURRENT_TIMESTAMP(3), 'another-node')");
			}
			this.context = new AnnotationConfigApplicationContext();
			this.context.registerBean(DataSource.class, () -> this.dataSource);
			this.context.register(ShedLockConfiguration.class);
			this.context.refresh();
			this.job = this.context.getBean(ShedLockJob.class);
			this.heldElsewhere = this.context.getBean(ShedLockHeldElsewhereJob.class);
			if (!org.springframework.aop.support.AopUtils.isAopProxy(this.job)) {
				throw new IllegalStateException("The ShedLock job is not proxied");
			}
			this.job.work();
			this.heldElsewhere.work();
			if (this.job.runs() != 1 || this.heldElsewhere.runs() != 0) {
				throw new IllegalStateException("ShedLock did not run the free lock's call or skip the held one");
			}
		}

		private static DataSource h2() {
			HikariDataSource dataSource = new HikariDataSource();
			dataSource.setJdbcUrl("jdbc:h2:mem:shedlock;DB_CLOSE_DELAY=-1");
			dataSource.setUsername("sa");
			dataSource.setMaximumPoolSize(4);
			return dataSource;
		}

		@TearDown(Level.Trial)
		public void tearDown() throws Exception {
			try (Connection connection = this.dataSource.getConnection();
					Statement statement = connection.createStatement()) {
				statement.execute("DROP TABLE IF EXISTS " + Store.SHEDLOCK_TABLE);
			}
			// Closes the data source too.
			this.context.close();
		}

	}

	@State(Scope.Benchmark)
	public static class ShedLockH2 extends ShedLockState {

		@Setup(Level.Trial)
		public void setUp() throws Exception {
			setUp(Store.H2);
		}

	}

	@State(Scope.Benchmark)
	public static class ShedLockMariaDb extends ShedLockState {

		@Setup(Level.Trial)
		public void setUp() throws Exception {
			setUp(Store.MARIADB);
		}

	}

	@Benchmark
	public void passThroughProxyCall(Plain state) {
		state.proxied.work();
	}

	@Benchmark
	public void plainCall(Plain state) {
		state.job.work();
	}

	@Benchmark
	public boolean isLeader(OnLeader state) {
		return state.election.isLeader();
	}

	@Benchmark
	public void onlyOnLeaderOnLeader(OnLeader state) {
		state.job.work();
	}

	@Benchmark
	public void onlyOnLeaderOnFollower(OnFollower state) {
		state.job.work();
	}

	@Benchmark
	public void shedLockH2Runs(ShedLockH2 state) {
		state.job.work();
	}

	@Benchmark
	public void shedLockH2Skips(ShedLockH2 state) {
		state.heldElsewhere.work();
	}

	@Benchmark
	public void shedLockMariaDbRuns(ShedLockMariaDb state) {
		state.job.work();
	}

	@Benchmark
	public void shedLockMariaDbSkips(ShedLockMariaDb state) {
		state.heldElsewhere.work();
	}

}
