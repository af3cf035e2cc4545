package io.github.leaderelection.autoconfigure;

import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.aop.OnlyOnLeaderAdvisor;
import io.github.leaderelection.aop.OnlyOnLeaderInterceptor;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.event.LeaderElectionEventConfiguration;
import io.github.leaderelection.scheduling.LeaderOnlyScheduling;
import io.github.leaderelection.scheduling.ScheduledJobs;
import io.github.leaderelection.spi.LeaseStore;
import io.micrometer.observation.ObservationRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.util.StringUtils;

/**
 * {@link EnableAutoConfiguration Auto-configuration} for leader election.
 *
 * <p>
 * Creates a {@link LeaderElectionEngine} (also the {@link LeaderElectionRegistry}) on the
 * {@link LeaseStore} of the selected backend, unless the application declares its own
 * store or registry, and a {@link LeaderElection} bean for the application's group. Every
 * {@link LeaderElectionListener} bean is added to the registry, among them the publisher
 * of the leadership events. Methods annotated with {@code @OnlyOnLeader} run only on the
 * leader. The election starts when the application is ready and stops as soon as the
 * context closes.
 *
 * @see LeaderElectionProperties
 */
@AutoConfiguration(afterName = { "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
		"org.springframework.cloud.zookeeper.ZookeeperAutoConfiguration" })
@ConditionalOnBooleanProperty(name = "leader-election.enabled", matchIfMissing = true)
@EnableConfigurationProperties(LeaderElectionProperties.class)
@Import({ SpringBootVersionCheck.class, JdbcBackendConfiguration.class, RedisBackendConfiguration.class,
		ZookeeperBackendConfiguration.class, EtcdBackendConfiguration.class, InMemoryBackendConfiguration.class,
		LeaderElectionAutoConfiguration.OnlyOnLeaderConfiguration.class,
		LeaderElectionAutoConfiguration.LeaderOnlySchedulingConfiguration.class,
		LeaderElectionEventConfiguration.class })
public final class LeaderElectionAutoConfiguration {

	private static final Logger logger = LoggerFactory.getLogger(LeaderElectionAutoConfiguration.class);

	@Bean
	@ConditionalOnMissingBean(LeaderElectionRegistry.class)
	LeaderElectionEngine leaderElectionEngine(LeaderElectionProperties properties,
			ObjectProvider<LeaseStore> leaseStore, ObjectProvider<LeaderElectionEngineCustomizer> customizers,
			ConfigurableListableBeanFactory beanFactory, Environment environment) {
		LeaderElectionBackend backend = properties.getBackend();
		if (backend != null && !backend.isAvailable()) {
			throw BackendDetection.unavailable(backend);
		}
		LeaseStore store = leaseStore.getIfAvailable();
		if (store == null) {
			throw BackendDetection.standard()
				.noStore(backend,
						new BackendDetection.Context(beanFactory, environment, beanFactory.getBeanClassLoader()));
		}
		LeaderElectionEngine.Builder builder = LeaderElectionEngine.builder(store)
			.timing(timing(properties))
			.releaseOnShutdown(properties.isReleaseOnShutdown())
			.watchBeforeLeading(properties.isWatchBeforeLeading())
			.shutdownTimeout(properties.getShutdownTimeout());
		String candidateId = properties.getCandidateId();
		if (candidateId != null) {
			builder.candidateId(candidateId);
		}
		LeaderElectionProperties.Balance balance = properties.getBalance();
		if (balance.isEnabled()) {
			try {
				builder.balance(balance.getWeight(), balance.getPreferredLeaders());
			}
			catch (IllegalArgumentException ex) {
				throw invalid("leader-election.balance",
						"weight " + balance.getWeight() + ", preferred-leaders " + balance.getPreferredLeaders(), ex,
						"Give leader-election.balance.weight a whole number of at least 1, and "
								+ "leader-election.balance.preferred-leaders valid group names and candidate ids.");
			}
		}
		customizers.orderedStream().forEach((customizer) -> customizer.customize(builder));
		LeaderElectionEngine engine;
		try {
			engine = builder.build();
		}
		catch (IllegalArgumentException ex) {
			throw (candidateId != null) ? invalid("leader-election.candidate-id", candidateId, ex,
					"Set leader-election.candidate-id to an id unique to this process, of at most 255 characters "
							+ "and without control characters, or remove it to generate one.")
					: ex;
		}
		joinPartitions(engine, properties.getPartitions());
		return engine;
	}

	private static void joinPartitions(LeaderElectionEngine engine, Map<String, Integer> partitions) {
		partitions.forEach((name, count) -> {
			try {
				engine.joinPartitions(name, (count != null) ? count : 0);
			}
			catch (IllegalArgumentException ex) {
				throw invalid("leader-election.partitions." + name, String.valueOf(count), ex,
						"Give each partitioned group a valid name and a number of partitions of at least 1, for "
								+ "example leader-election.partitions.orders=64.");
			}
		});
	}

	@Bean
	@ConditionalOnMissingBean(LeaderElection.class)
	LeaderElection leaderElection(LeaderElectionRegistry registry, LeaderElectionProperties properties,
			Environment environment) {
		LeaderElection election = joinApplicationGroup(registry, properties, environment);
		if (properties.getGroup() == null && !StringUtils.hasText(environment.getProperty("spring.application.name"))) {
			// Not a failure: a single application per store works, and tests often have
			// no name. But two unnamed applications on one store would share one election
			// without a word.
			logger.warn("Leader election joins group '{}' because neither leader-election.group nor "
					+ "spring.application.name is set: every other application without a name that elects "
					+ "through the same store shares this election. Set spring.application.name (or "
					+ "leader-election.group).", election.group());
		}
		return election;
	}

	/**
	 * The election of the application's group, with or without leader election enabled.
	 */
	static LeaderElection joinApplicationGroup(LeaderElectionRegistry registry, LeaderElectionProperties properties,
			Environment environment) {
		String group = properties.determineGroup(environment);
		try {
			return registry.join(group);
		}
		catch (IllegalArgumentException ex) {
			String property = (properties.getGroup() != null) ? "leader-election.group" : "spring.application.name";
			throw invalid(property, group, ex, "Set leader-election.group to a name of at most 255 characters without "
					+ "control characters, or remove it to use spring.application.name (or 'default').");
		}
	}

	@Bean
	LeaderElectionLifecycle leaderElectionLifecycle(LeaderElectionRegistry registry,
			ObjectProvider<LeaderElectionListener> listeners) {
		return new LeaderElectionLifecycle(registry, listeners);
	}

	private static ElectionTiming timing(LeaderElectionProperties properties) {
		try {
			return new ElectionTiming(properties.getLeaseDuration(), properties.getRenewDeadline(),
					properties.getRetryPeriod());
		}
		catch (IllegalArgumentException ex) {
			throw new LeaderElectionConfigurationException(
					"Invalid leader election timing (leader-election.lease-duration="
							+ print(properties.getLeaseDuration()) + ", leader-election.renew-deadline="
							+ print(properties.getRenewDeadline()) + ", leader-election.retry-period="
							+ print(properties.getRetryPeriod()) + "): " + ex.getMessage(),
					"Update leader-election.lease-duration, leader-election.renew-deadline and "
							+ "leader-election.retry-period so that lease-duration > renew-deadline > 1.2 x retry-period "
							+ "and retry-period >= " + ElectionTiming.MINIMUM_RETRY_PERIOD.toMillis()
							+ "ms (the defaults are 15s, 7s and 2s).",
					ex);
		}
	}

	private static String print(Duration duration) {
		return DurationBounds.print(duration);
	}

	private static LeaderElectionConfigurationException invalid(String property, String value,
			IllegalArgumentException ex, String action) {
		return new LeaderElectionConfigurationException(
				"Invalid value '" + value + "' for " + property + ": " + ex.getMessage(), action, ex);
	}

	/**
	 * Scheduled {@code @OnlyOnLeader} methods claim each tick in the store before they
	 * run, and the next leader catches up the ticks missed.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty(name = "leader-election.jobs.run-records", matchIfMissing = true)
	static class LeaderOnlySchedulingConfiguration {

		@Bean
		ScheduledJobs leaderOnlyScheduledJobs(ObjectProvider<LeaderElectionRegistry> registry,
				LeaderElectionProperties properties, Environment environment,
				ConfigurableListableBeanFactory beanFactory, ObjectProvider<ObservationRegistry> observations) {
			return new ScheduledJobs(registry::getObject, () -> properties.determineGroup(environment),
					() -> properties.getJobs().toPolicy(), beanFactory,
					() -> observations.getIfAvailable(() -> ObservationRegistry.NOOP));
		}

		@Bean
		LeaderOnlyScheduling leaderOnlyScheduling(ScheduledJobs leaderOnlyScheduledJobs) {
			return new LeaderOnlyScheduling(leaderOnlyScheduledJobs);
		}

	}

	/**
	 * The {@code @OnlyOnLeader} guard, with leader election enabled or not (then this
	 * instance leads every group unelected). Its beans are infrastructure, created early
	 * by the auto-proxy creator, so they depend on the registry and the properties only
	 * lazily.
	 */
	@Configuration(proxyBeanMethods = false)
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@Import(OnlyOnLeaderProxyRegistrar.class)
	static class OnlyOnLeaderConfiguration {

		@Bean
		@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
		static OnlyOnLeaderInterceptor onlyOnLeaderInterceptor(ObjectProvider<LeaderElectionRegistry> registry,
				ObjectProvider<UnelectedLeaderElections> unelected, ObjectProvider<LeaderElectionProperties> properties,
				Environment environment) {
			return new OnlyOnLeaderInterceptor(elections(registry, unelected, environment),
					() -> properties.getObject().determineGroup(environment),
					() -> properties.getObject().getShutdownTimeout());
		}

		@Bean
		@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
		static OnlyOnLeaderAdvisor onlyOnLeaderAdvisor(OnlyOnLeaderInterceptor onlyOnLeaderInterceptor) {
			return new OnlyOnLeaderAdvisor(onlyOnLeaderInterceptor);
		}

		@Bean
		@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
		static OnlyOnLeaderBeans onlyOnLeaderBeans(ConfigurableListableBeanFactory beanFactory,
				ObjectProvider<OnlyOnLeaderAdvisor> advisor, ObjectProvider<LeaderElectionRegistry> registry,
				ObjectProvider<UnelectedLeaderElections> unelected, ObjectProvider<LeaderElectionProperties> properties,
				Environment environment) {
			return new OnlyOnLeaderBeans(beanFactory, () -> advisor.getObject().getPointcut().getMethodMatcher(),
					elections(registry, unelected, environment),
					() -> properties.getObject().determineGroup(environment));
		}

		private static Supplier<LeaderElectionRegistry> elections(ObjectProvider<LeaderElectionRegistry> registry,
				ObjectProvider<UnelectedLeaderElections> unelected, Environment environment) {
			boolean enabled = environment.getProperty("leader-election.enabled", Boolean.class, true);
			return enabled ? registry::getObject : () -> unelected.getObject().registry();
		}

	}

}
