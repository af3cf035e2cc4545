package io.github.leaderelection.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties for leader election through ZooKeeper.
 */
@ConfigurationProperties("leader-election.zookeeper")
public class LeaderElectionZookeeperProperties implements InitializingBean {

	/**
	 * Connection string of the ZooKeeper ensemble, such as 'zk1:2181,zk2:2181,zk3:2181'.
	 * When set, leader election uses a client of its own; otherwise the application's
	 * CuratorFramework bean.
	 */
	private @Nullable String connectString;

	/**
	 * Session timeout to ask for, for the client built from the connect string. A
	 * leader's lease lasts as long as its session, so it must be at least the lease
	 * duration, which is the default, and at most 1d. The servers may lower it (to 20
	 * ticks by default), which fails startup.
	 */
	private @Nullable Duration sessionTimeout;

	/**
	 * How long the client built from the connect string waits for a connection, at
	 * startup and whenever it has lost one. Positive, at most 1h.
	 */
	private Duration connectionTimeout = Duration.ofSeconds(5);

	/**
	 * Node under which every group lives: segments of letters, digits and '_', '.', '-',
	 * each starting with a letter or '_'.
	 */
	private String basePath = "/leader-election";

	/**
	 * Digest credentials, as 'user:password', with which the client built from the
	 * connect string authenticates. With them, the nodes it creates are accessible to
	 * that identity only (see acl).
	 */
	private @Nullable String auth;

	/**
	 * Access to the nodes that the client built from the connect string creates. Defaults
	 * to creator when auth is set, and to open otherwise.
	 */
	private @Nullable Acl acl;

	/**
	 * Whether a leader keeps leading while its connection is suspended, until its session
	 * is lost or its renew deadline passes. Safe only while the session timeout is above
	 * the renew deadline (CURATOR-460); by default a leader steps down as soon as the
	 * connection is suspended.
	 */
	private boolean keepLeadingWhileSuspended;

	/**
	 * Checks the ranges of the durations, which the client takes in int milliseconds.
	 * @throws LeaderElectionConfigurationException naming the property and the fix
	 */
	@Override
	public void afterPropertiesSet() {
		if (this.sessionTimeout != null) {
			DurationBounds.requirePositiveAtMost("leader-election.zookeeper.session-timeout", this.sessionTimeout,
					DurationBounds.ONE_DAY, "the session timeout to ask ZooKeeper for, at least "
							+ "leader-election.lease-duration, or remove it to use the lease duration");
		}
		DurationBounds.requirePositiveAtMost("leader-election.zookeeper.connection-timeout", this.connectionTimeout,
				DurationBounds.ONE_HOUR,
				"how long to wait for a connection to ZooKeeper, for example 5s (the default)");
	}

	public @Nullable String getConnectString() {
		return this.connectString;
	}

	public void setConnectString(@Nullable String connectString) {
		this.connectString = connectString;
	}

	public @Nullable Duration getSessionTimeout() {
		return this.sessionTimeout;
	}

	public void setSessionTimeout(@Nullable Duration sessionTimeout) {
		this.sessionTimeout = sessionTimeout;
	}

	public Duration getConnectionTimeout() {
		return this.connectionTimeout;
	}

	public void setConnectionTimeout(Duration connectionTimeout) {
		this.connectionTimeout = connectionTimeout;
	}

	public String getBasePath() {
		return this.basePath;
	}

	public void setBasePath(String basePath) {
		this.basePath = basePath;
	}

	public @Nullable String getAuth() {
		return this.auth;
	}

	public void setAuth(@Nullable String auth) {
		this.auth = auth;
	}

	public @Nullable Acl getAcl() {
		return this.acl;
	}

	public void setAcl(@Nullable Acl acl) {
		this.acl = acl;
	}

	/**
	 * The access that the nodes get: the configured one, else creator when auth is set,
	 * else open.
	 */
	Acl determineAcl() {
		if (this.acl != null) {
			return this.acl;
		}
		return (this.auth != null) ? Acl.CREATOR : Acl.OPEN;
	}

	public boolean isKeepLeadingWhileSuspended() {
		return this.keepLeadingWhileSuspended;
	}

	public void setKeepLeadingWhileSuspended(boolean keepLeadingWhileSuspended) {
		this.keepLeadingWhileSuspended = keepLeadingWhileSuspended;
	}

	/**
	 * Access to the nodes that leader election creates.
	 */
	public enum Acl {

		/** Anyone may read and change them (ZooKeeper's OPEN_ACL_UNSAFE). */
		OPEN,

		/**
		 * Only the authenticated identity that created them, that is every instance with
		 * the same auth, may read and change them (CREATOR_ALL_ACL). Needs auth.
		 */
		CREATOR

	}

}
