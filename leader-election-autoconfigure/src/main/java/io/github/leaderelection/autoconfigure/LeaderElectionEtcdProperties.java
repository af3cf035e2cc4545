package io.github.leaderelection.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties for leader election through etcd.
 */
@ConfigurationProperties("leader-election.etcd")
public class LeaderElectionEtcdProperties implements InitializingBean {

	/**
	 * Client URLs of the etcd members, such as 'http://etcd1:2379'. When set, leader
	 * election uses a jetcd client of its own; otherwise the application's Client bean.
	 */
	private List<String> endpoints = new ArrayList<>();

	/**
	 * First part of every key leader election writes: letters, digits, '_', '.', single
	 * '-' and '/' between parts.
	 */
	private String namespace = "leader-election";

	/** User for etcd's authentication, with the password. */
	private @Nullable String user;

	/** Password of the user. */
	private @Nullable String password;

	/**
	 * Name of the SSL bundle (spring.ssl.bundle.*) whose key and trust material the
	 * client uses; without it, 'https' endpoints are verified against the JVM's trust
	 * store.
	 */
	private @Nullable String sslBundle;

	/** How long the client may take to connect to a member. Positive, at most 1h. */
	private Duration connectTimeout = Duration.ofSeconds(5);

	/**
	 * Checks the range of the connect timeout.
	 * @throws LeaderElectionConfigurationException naming the property and the fix
	 */
	@Override
	public void afterPropertiesSet() {
		DurationBounds.requirePositiveAtMost("leader-election.etcd.connect-timeout", this.connectTimeout,
				DurationBounds.ONE_HOUR,
				"how long the client may take to connect to a member, for example 5s (the " + "default)");
	}

	public List<String> getEndpoints() {
		return this.endpoints;
	}

	public void setEndpoints(List<String> endpoints) {
		this.endpoints = endpoints;
	}

	public String getNamespace() {
		return this.namespace;
	}

	public void setNamespace(String namespace) {
		this.namespace = namespace;
	}

	public @Nullable String getUser() {
		return this.user;
	}

	public void setUser(@Nullable String user) {
		this.user = user;
	}

	public @Nullable String getPassword() {
		return this.password;
	}

	public void setPassword(@Nullable String password) {
		this.password = password;
	}

	public @Nullable String getSslBundle() {
		return this.sslBundle;
	}

	public void setSslBundle(@Nullable String sslBundle) {
		this.sslBundle = sslBundle;
	}

	public Duration getConnectTimeout() {
		return this.connectTimeout;
	}

	public void setConnectTimeout(Duration connectTimeout) {
		this.connectTimeout = connectTimeout;
	}

}
