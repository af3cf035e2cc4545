package io.github.leaderelection.autoconfigure;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

/**
 * Decides which backend fits the application: each backend that can be detected says what
 * it needs (classes, beans, properties) and how to provide it. Used by the backend
 * conditions to pick a backend when {@code leader-election.backend} is not set, and to
 * explain at startup why no store could be created.
 */
final class BackendDetection {

	static final String BACKEND_PROPERTY = "leader-election.backend";

	private static final String REDIS_CONNECTION_FACTORY = "org.springframework.data.redis.connection.RedisConnectionFactory";

	private static final String CURATOR_FRAMEWORK = "org.apache.curator.framework.CuratorFramework";

	private static final String ETCD_CLIENT = "io.etcd.jetcd.Client";

	private static final BackendDetection STANDARD = new BackendDetection(List.of(
			new Candidate(LeaderElectionBackend.JDBC, "a DataSource bean, with spring-boot-jdbc on the class path",
					"add spring-boot-starter-jdbc and set spring.datasource.url (or declare a DataSource bean)",
					"spring-boot-starter-jdbc", BackendDetection::hasJdbcLibraries, BackendDetection::hasDataSource),
			new Candidate(LeaderElectionBackend.REDIS, "a RedisConnectionFactory bean, with Lettuce on the class path",
					"add spring-boot-starter-data-redis and set spring.data.redis.host (or declare a "
							+ "LettuceConnectionFactory bean)",
					"spring-boot-starter-data-redis", BackendDetection::hasRedisLibraries,
					BackendDetection::hasRedisConnectionFactory),
			new Candidate(LeaderElectionBackend.ZOOKEEPER,
					"a CuratorFramework bean or the " + ZookeeperBackendConfiguration.CONNECT_STRING_PROPERTY
							+ " property, with curator-framework on the class path",
					"add org.apache.curator:curator-framework and set "
							+ ZookeeperBackendConfiguration.CONNECT_STRING_PROPERTY
							+ " (or declare a CuratorFramework bean)",
					"org.apache.curator:curator-framework", BackendDetection::hasZookeeperLibraries,
					BackendDetection::hasZookeeper),
			new Candidate(LeaderElectionBackend.ETCD,
					"a jetcd Client bean or the " + EtcdBackendConfiguration.ENDPOINTS_PROPERTY
							+ " property, with jetcd-core on the class path",
					"add io.etcd:jetcd-core and set " + EtcdBackendConfiguration.ENDPOINTS_PROPERTY
							+ " (or declare a jetcd Client bean)",
					"io.etcd:jetcd-core", BackendDetection::hasEtcdLibraries, BackendDetection::hasEtcd)));

	private final List<Candidate> candidates;

	BackendDetection(List<Candidate> candidates) {
		this.candidates = List.copyOf(candidates);
	}

	static BackendDetection standard() {
		return STANDARD;
	}

	/** The detectable backends that the application fits, in declaration order. */
	List<LeaderElectionBackend> fitting(Context context) {
		return this.candidates.stream()
			.filter((candidate) -> candidate.fits().test(context))
			.map(Candidate::backend)
			.toList();
	}

	/** Whether a backend selected by the property can work in this application. */
	boolean fits(LeaderElectionBackend backend, Context context) {
		if (!backend.isAvailable()) {
			return false;
		}
		Candidate candidate = find(backend);
		return candidate == null || candidate.fits().test(context);
	}

	/** What a backend can be detected by, such as "a DataSource bean". */
	String evidence(LeaderElectionBackend backend) {
		Candidate candidate = find(backend);
		return (candidate != null) ? candidate.evidence() : "its selection";
	}

	/**
	 * Explains why no lease store exists, for the backend selected by the property (or
	 * {@code null} when the property is not set).
	 */
	LeaderElectionConfigurationException noStore(@Nullable LeaderElectionBackend configured, Context context) {
		if (configured != null) {
			if (!configured.isAvailable()) {
				return unavailable(configured);
			}
			Candidate candidate = find(configured);
			String needs = (candidate != null) ? candidate.evidence() : "a lease store";
			String requirement = (candidate != null) ? candidate.requirement() : "declare a LeaseStore bean";
			return new LeaderElectionConfigurationException(
					BACKEND_PROPERTY + " is '" + configured.propertyValue() + "', but the application lacks what that "
							+ "backend needs: " + needs + ".",
					"To elect through " + configured.propertyValue() + ", " + requirement + ". Or set "
							+ BACKEND_PROPERTY + " to another backend (" + availableOtherThan(configured) + ").");
		}
		List<LeaderElectionBackend> fitting = fitting(context);
		if (fitting.size() > 1) {
			return new LeaderElectionConfigurationException(
					"Several leader election backends fit the application and " + BACKEND_PROPERTY + " is not set: "
							+ fitting.stream()
								.map((backend) -> backend.propertyValue() + " (detected by " + evidence(backend) + ")")
								.collect(Collectors.joining(", "))
							+ ".",
					"Set " + BACKEND_PROPERTY + " to one of: "
							+ fitting.stream()
								.map(LeaderElectionBackend::propertyValue)
								.collect(Collectors.joining(", "))
							+ ".");
		}
		return new LeaderElectionConfigurationException(
				"No leader election backend fits the application: " + BACKEND_PROPERTY + " is not set and none was "
						+ "detected ("
						+ this.candidates.stream()
							.map((candidate) -> candidate.backend().propertyValue() + " needs " + candidate.evidence())
							.collect(Collectors.joining("; "))
						+ ").",
				"To elect through "
						+ this.candidates.stream()
							.map((candidate) -> candidate.backend().propertyValue() + ", " + candidate.requirement())
							.collect(Collectors.joining("; to elect through "))
						+ ". Or set " + BACKEND_PROPERTY + "=in-memory to elect within this JVM only (tests, local "
						+ "runs), declare a LeaseStore bean, or set leader-election.enabled=false.");
	}

	static LeaderElectionConfigurationException unavailable(LeaderElectionBackend backend) {
		return new LeaderElectionConfigurationException(
				BACKEND_PROPERTY + " is '" + backend.propertyValue() + "', but the " + backend.propertyValue()
						+ " backend is not available in this version.",
				"Set " + BACKEND_PROPERTY + " to an available backend (" + available()
						+ "), or remove it to detect the backend from the application's beans.");
	}

	static String available() {
		return availableOtherThan(null);
	}

	/**
	 * The backends as a user can choose them in this application: those whose libraries
	 * are on the class path, then each of the others with the library it needs, such as
	 * {@code "jdbc, in-memory; redis needs spring-boot-starter-data-redis"}.
	 */
	String onClassPath(@Nullable ClassLoader classLoader) {
		String usable = Arrays.stream(LeaderElectionBackend.values())
			.filter((backend) -> backend.isAvailable() && librariesPresent(backend, classLoader))
			.map(LeaderElectionBackend::propertyValue)
			.collect(Collectors.joining(", "));
		String missing = this.candidates.stream()
			.filter((candidate) -> candidate.backend().isAvailable() && !candidate.libraries().test(classLoader))
			.map((candidate) -> candidate.backend().propertyValue() + " needs " + candidate.library())
			.collect(Collectors.joining(", "));
		return missing.isEmpty() ? usable : usable + "; " + missing;
	}

	private boolean librariesPresent(LeaderElectionBackend backend, @Nullable ClassLoader classLoader) {
		Candidate candidate = find(backend);
		return candidate == null || candidate.libraries().test(classLoader);
	}

	private static String availableOtherThan(@Nullable LeaderElectionBackend excluded) {
		return Arrays.stream(LeaderElectionBackend.values())
			.filter((backend) -> backend.isAvailable() && backend != excluded)
			.map(LeaderElectionBackend::propertyValue)
			.collect(Collectors.joining(", "));
	}

	private @Nullable Candidate find(LeaderElectionBackend backend) {
		return this.candidates.stream().filter((candidate) -> candidate.backend() == backend).findFirst().orElse(null);
	}

	private static boolean hasJdbcLibraries(@Nullable ClassLoader classLoader) {
		return ClassUtils.isPresent("org.springframework.boot.jdbc.EmbeddedDatabaseConnection", classLoader)
				&& ClassUtils.isPresent("org.springframework.boot.sql.init.DatabaseInitializationMode", classLoader);
	}

	private static boolean hasRedisLibraries(@Nullable ClassLoader classLoader) {
		return ClassUtils.isPresent(REDIS_CONNECTION_FACTORY, classLoader)
				&& ClassUtils.isPresent("io.lettuce.core.RedisClient", classLoader);
	}

	private static boolean hasZookeeperLibraries(@Nullable ClassLoader classLoader) {
		return ClassUtils.isPresent(CURATOR_FRAMEWORK, classLoader);
	}

	private static boolean hasEtcdLibraries(@Nullable ClassLoader classLoader) {
		return ClassUtils.isPresent(ETCD_CLIENT, classLoader)
				&& ClassUtils.isPresent("io.github.leaderelection.etcd.EtcdLeaseStore", classLoader);
	}

	private static boolean hasDataSource(Context context) {
		return hasJdbcLibraries(context.classLoader())
				&& context.beanFactory().getBeanNamesForType(DataSource.class, true, false).length > 0;
	}

	private static boolean hasRedisConnectionFactory(Context context) {
		String factoryType = REDIS_CONNECTION_FACTORY;
		return hasRedisLibraries(context.classLoader()) && context.beanFactory()
			.getBeanNamesForType(ClassUtils.resolveClassName(factoryType, context.classLoader()), true,
					false).length > 0;
	}

	private static boolean hasZookeeper(Context context) {
		String clientType = CURATOR_FRAMEWORK;
		return hasZookeeperLibraries(context.classLoader()) && (StringUtils
			.hasText(context.environment().getProperty(ZookeeperBackendConfiguration.CONNECT_STRING_PROPERTY))
				|| context.beanFactory()
					.getBeanNamesForType(ClassUtils.resolveClassName(clientType, context.classLoader()), true,
							false).length > 0);
	}

	private static boolean hasEtcd(Context context) {
		return hasEtcdLibraries(context.classLoader())
				&& (EtcdBackendConfiguration.hasEndpoints(context.environment()) || context.beanFactory()
					.getBeanNamesForType(ClassUtils.resolveClassName(ETCD_CLIENT, context.classLoader()), true,
							false).length > 0);
	}

	/**
	 * What detection looks at.
	 *
	 * @param beanFactory the application's beans, not instantiated by the detection
	 * @param environment the application's properties
	 * @param classLoader the application's class loader
	 */
	record Context(ListableBeanFactory beanFactory, Environment environment, @Nullable ClassLoader classLoader) {

		Context {
			Objects.requireNonNull(beanFactory, "beanFactory");
			Objects.requireNonNull(environment, "environment");
		}

	}

	/**
	 * A detectable backend.
	 *
	 * @param backend the backend
	 * @param evidence what it is detected by, such as "a DataSource bean"
	 * @param requirement how to provide that, phrased as an instruction
	 * @param library the library that brings its classes, such as a starter
	 * @param libraries whether those classes are on a class path
	 * @param fits whether the application provides it
	 */
	record Candidate(LeaderElectionBackend backend, String evidence, String requirement, String library,
			Predicate<@Nullable ClassLoader> libraries, Predicate<Context> fits) {

	}

}
