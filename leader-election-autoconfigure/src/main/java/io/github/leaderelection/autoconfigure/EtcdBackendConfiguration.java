package io.github.leaderelection.autoconfigure;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;

import javax.net.ssl.SSLException;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.etcd.EtcdLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Elects through etcd: with a jetcd client of its own when
 * {@code leader-election.etcd.endpoints} is set, otherwise with the application's
 * {@link Client}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = { "io.etcd.jetcd.Client", "io.github.leaderelection.etcd.EtcdLeaseStore" })
@ConditionalOnMissingBean({ LeaseStore.class, LeaderElectionRegistry.class })
@ConditionalOnLeaderElectionBackend(LeaderElectionBackend.ETCD)
@EnableConfigurationProperties(LeaderElectionEtcdProperties.class)
class EtcdBackendConfiguration {

	static final String ENDPOINTS_PROPERTY = "leader-election.etcd.endpoints";

	private static final String NAMESPACE_PROPERTY = "leader-election.etcd.namespace";

	private static final String SSL_BUNDLE_PROPERTY = "leader-election.etcd.ssl-bundle";

	private static final Logger logger = LoggerFactory.getLogger(EtcdBackendConfiguration.class);

	/**
	 * The client built from the endpoints. Not a {@link Client} bean, so that it never
	 * competes with the application's own.
	 */
	@Bean
	@Conditional(OnEndpoints.class)
	LeaderElectionEtcdClient leaderElectionEtcdClient(LeaderElectionEtcdProperties etcd,
			ObjectProvider<SslBundles> sslBundles) {
		ClientBuilder builder = Client.builder()
			.endpoints(etcd.getEndpoints().stream().map(EtcdBackendConfiguration::endpoint).toArray(URI[]::new))
			.connectTimeout(etcd.getConnectTimeout());
		if (etcd.getUser() != null) {
			if (etcd.getPassword() == null) {
				throw new LeaderElectionConfigurationException(
						"leader-election.etcd.user is set but leader-election.etcd.password is not.",
						"Set leader-election.etcd.password to the user's password, or remove "
								+ "leader-election.etcd.user to connect without authentication.");
			}
			builder.user(bytes(etcd.getUser())).password(bytes(etcd.getPassword()));
			warnOfPlainTextCredentials(etcd);
		}
		configureTls(builder, etcd, sslBundles);
		return new LeaderElectionEtcdClient(builder.build());
	}

	@Bean
	EtcdLeaseStore leaderElectionLeaseStore(LeaderElectionEtcdProperties etcd,
			Optional<LeaderElectionEtcdClient> ownClient, ObjectProvider<Client> applicationClient,
			ListableBeanFactory beanFactory) {
		Client client = ownClient.map(LeaderElectionEtcdClient::client).orElseGet(applicationClient::getIfUnique);
		if (client == null) {
			throw new LeaderElectionConfigurationException(
					"Leader election uses the etcd backend but cannot choose among the jetcd Client beans "
							+ Arrays.toString(beanFactory.getBeanNamesForType(Client.class, true, false))
							+ ": none is marked @Primary.",
					"Mark the Client to elect through with @Primary, set " + ENDPOINTS_PROPERTY
							+ " to give leader election a client of its own, or set "
							+ BackendDetection.BACKEND_PROPERTY + " to another backend.");
		}
		try {
			return new EtcdLeaseStore(client, etcd.getNamespace());
		}
		catch (IllegalArgumentException ex) {
			throw new LeaderElectionConfigurationException(
					"Invalid value '" + etcd.getNamespace() + "' for " + NAMESPACE_PROPERTY + ": " + ex.getMessage(),
					"Set " + NAMESPACE_PROPERTY + " to parts of letters, digits, '_' and '.' joined by single '-' "
							+ "or '/', such as apps/orders-election, or remove it to use leader-election.",
					ex);
		}
	}

	/**
	 * Not a failure, as an etcd on a trusted network may do without TLS; but the password
	 * then crosses it readable by anyone who can listen.
	 */
	private static void warnOfPlainTextCredentials(LeaderElectionEtcdProperties etcd) {
		if (etcd.getSslBundle() != null) {
			return;
		}
		String[] plain = etcd.getEndpoints()
			.stream()
			.map(String::trim)
			.filter((value) -> value.startsWith("http:"))
			.toArray(String[]::new);
		if (plain.length > 0) {
			logger.warn("leader-election.etcd.user and leader-election.etcd.password are set, but {} lists endpoints "
					+ "over unencrypted http ({}): the password, and the token that etcd returns for it, cross the "
					+ "network in clear text. Use https:// endpoints in {} (with {} if the members' certificates are "
					+ "not trusted by the JVM).", ENDPOINTS_PROPERTY, String.join(", ", plain), ENDPOINTS_PROPERTY,
					SSL_BUNDLE_PROPERTY);
		}
	}

	static boolean hasEndpoints(Environment environment) {
		return Binder.get(environment)
			.bind(ENDPOINTS_PROPERTY, Bindable.listOf(String.class))
			.map((endpoints) -> !endpoints.isEmpty())
			.orElse(false);
	}

	private static URI endpoint(String value) {
		URI uri;
		try {
			uri = URI.create(value.trim());
		}
		catch (IllegalArgumentException ex) {
			uri = null;
		}
		if (uri == null || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null
				|| uri.getPort() <= 0) {
			throw new LeaderElectionConfigurationException(
					"Invalid endpoint '" + value + "' in " + ENDPOINTS_PROPERTY
							+ ": an etcd client URL is http:// or https://, a host and a port.",
					"Set " + ENDPOINTS_PROPERTY + " to the client URLs of the etcd members, such as "
							+ "http://etcd1:2379,http://etcd2:2379.");
		}
		return uri;
	}

	private static void configureTls(ClientBuilder builder, LeaderElectionEtcdProperties etcd,
			ObjectProvider<SslBundles> sslBundles) {
		String bundleName = etcd.getSslBundle();
		boolean https = etcd.getEndpoints().stream().anyMatch((value) -> value.trim().startsWith("https:"));
		if (bundleName == null && !https) {
			return;
		}
		try {
			if (bundleName == null) {
				builder.sslContext((ssl) -> {
					// The JVM's trust store.
				});
				return;
			}
			SslBundle bundle = sslBundle(sslBundles.getIfAvailable(), bundleName);
			builder.sslContext((ssl) -> ssl.keyManager(bundle.getManagers().getKeyManagerFactory())
				.trustManager(bundle.getManagers().getTrustManagerFactory()));
		}
		catch (SSLException ex) {
			throw new LeaderElectionConfigurationException("Could not set up TLS for etcd: " + ex.getMessage(),
					"Check the SSL bundle named by " + SSL_BUNDLE_PROPERTY + ".", ex);
		}
	}

	private static SslBundle sslBundle(@Nullable SslBundles bundles, String name) {
		try {
			if (bundles == null) {
				throw new NoSuchSslBundleException(name, "no SSL bundles are configured");
			}
			return bundles.getBundle(name);
		}
		catch (NoSuchSslBundleException ex) {
			throw new LeaderElectionConfigurationException(
					SSL_BUNDLE_PROPERTY + " is '" + name + "', but there is no SSL bundle of that name.",
					"Declare it under spring.ssl.bundle (pem or jks), or remove " + SSL_BUNDLE_PROPERTY + ".", ex);
		}
	}

	private static ByteSequence bytes(String value) {
		return ByteSequence.from(value, StandardCharsets.UTF_8);
	}

	/** Whether {@code leader-election.etcd.endpoints} lists any endpoint. */
	static final class OnEndpoints implements Condition {

		@Override
		public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
			return hasEndpoints(context.getEnvironment());
		}

	}

	/**
	 * The jetcd client that leader election built for itself, closed with the context.
	 *
	 * @param client the client
	 */
	record LeaderElectionEtcdClient(Client client) implements AutoCloseable {

		@Override
		public void close() {
			this.client.close();
		}

	}

}
