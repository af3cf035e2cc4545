package io.github.leaderelection.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.env.Environment;
import org.springframework.util.StringUtils;
import org.springframework.util.unit.DataSize;

/**
 * Configuration properties for leader election.
 */
@ConfigurationProperties("leader-election")
public class LeaderElectionProperties {

	/** Group joined when no group is configured and the application has no name. */
	static final String DEFAULT_GROUP = "default";

	/**
	 * Whether to enable leader election. When disabled, there is no election: every
	 * instance leads every group in term 0 and runs the methods annotated with
	 * OnlyOnLeader.
	 */
	private boolean enabled = true;

	/**
	 * Store to elect through. When not set, it is detected from the application's beans:
	 * a DataSource selects jdbc, a RedisConnectionFactory selects redis, a
	 * CuratorFramework or 'leader-election.zookeeper.connect-string' selects zookeeper.
	 */
	private @Nullable LeaderElectionBackend backend;

	/**
	 * Group that the application joins, also used by OnlyOnLeader methods that name no
	 * group. Defaults to the value of 'spring.application.name', or 'default' when that
	 * is not set.
	 */
	private @Nullable String group;

	/**
	 * Candidate id of this instance, unique per process. Defaults to the host name, the
	 * process id and a random suffix.
	 */
	private @Nullable String candidateId;

	/**
	 * How long the store keeps a lease that is not renewed. Must be greater than the
	 * renew deadline.
	 */
	private Duration leaseDuration = Duration.ofSeconds(15);

	/**
	 * How long a leader keeps leading after the start of its last successful renewal.
	 * Must be greater than 1.2 times the retry period.
	 */
	private Duration renewDeadline = Duration.ofSeconds(10);

	/**
	 * Interval between a leader's renewals and between a follower's attempts to lead.
	 */
	private Duration retryPeriod = Duration.ofSeconds(2);

	/**
	 * Whether to release held leases on shutdown, so that another instance takes over at
	 * once rather than when the lease runs out.
	 */
	private boolean releaseOnShutdown = true;

	/**
	 * Maximum time to wait on shutdown for running OnlyOnLeader methods before the leases
	 * are released.
	 */
	private Duration shutdownTimeout = Duration.ofSeconds(10);

	private final Balance balance = new Balance();

	private final Endpoint endpoint = new Endpoint();

	/**
	 * Partitioned groups to join, by name, with their number of partitions: partition i
	 * of 'orders' is the group 'orders/i'. With balancing on, each instance owns its
	 * share of them (LeaderElectionRegistry.ownedPartitions).
	 */
	private Map<String, Integer> partitions = new LinkedHashMap<>();

	public boolean isEnabled() {
		return this.enabled;
	}

	public Endpoint getEndpoint() {
		return this.endpoint;
	}

	public Balance getBalance() {
		return this.balance;
	}

	public Map<String, Integer> getPartitions() {
		return this.partitions;
	}

	public void setPartitions(Map<String, Integer> partitions) {
		this.partitions = partitions;
	}

	/**
	 * Limits of the leaderelection endpoint's write operations.
	 */
	public static class Endpoint {

		/**
		 * Most write operations (yield, force-leader, force-reelection) one group accepts
		 * within the action window; further ones are refused (429) until the oldest
		 * leaves the window. Each action may leave the group without a leader for up to a
		 * lease duration, so a loop of them keeps it leaderless.
		 */
		private int maxActionsPerGroup = 10;

		/**
		 * Window over which the write operations of one group are counted.
		 */
		private Duration actionWindow = Duration.ofMinutes(1);

		/**
		 * Largest request body the write operations accept; a larger one is refused (413)
		 * before it is read.
		 */
		private DataSize maxRequestSize = DataSize.ofKilobytes(4);

		public int getMaxActionsPerGroup() {
			return this.maxActionsPerGroup;
		}

		public void setMaxActionsPerGroup(int maxActionsPerGroup) {
			this.maxActionsPerGroup = maxActionsPerGroup;
		}

		public Duration getActionWindow() {
			return this.actionWindow;
		}

		public void setActionWindow(Duration actionWindow) {
			this.actionWindow = actionWindow;
		}

		public DataSize getMaxRequestSize() {
			return this.maxRequestSize;
		}

		public void setMaxRequestSize(DataSize maxRequestSize) {
			this.maxRequestSize = maxRequestSize;
		}

	}

	/**
	 * Spreading leadership over the instances.
	 */
	public static class Balance {

		/**
		 * Whether to spread the leadership of the groups over the live instances, each
		 * leading between the floor and the ceiling of its share, instead of leaving
		 * every group with whichever instance took it first. Off by default: it moves
		 * leadership between healthy instances, which leader-only work must be ready for,
		 * and it needs the store to list live instances (with JDBC, a second table).
		 */
		private boolean enabled;

		/**
		 * This instance's weight: its share of the groups is in proportion to it (2 leads
		 * twice as many as 1).
		 */
		private int weight = 1;

		/**
		 * Groups pinned to the candidate id that leads them whenever it is live, by
		 * group.
		 */
		private Map<String, String> preferredLeaders = new LinkedHashMap<>();

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public int getWeight() {
			return this.weight;
		}

		public void setWeight(int weight) {
			this.weight = weight;
		}

		public Map<String, String> getPreferredLeaders() {
			return this.preferredLeaders;
		}

		public void setPreferredLeaders(Map<String, String> preferredLeaders) {
			this.preferredLeaders = preferredLeaders;
		}

	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public @Nullable LeaderElectionBackend getBackend() {
		return this.backend;
	}

	public void setBackend(@Nullable LeaderElectionBackend backend) {
		this.backend = backend;
	}

	public @Nullable String getGroup() {
		return this.group;
	}

	public void setGroup(@Nullable String group) {
		this.group = group;
	}

	public @Nullable String getCandidateId() {
		return this.candidateId;
	}

	public void setCandidateId(@Nullable String candidateId) {
		this.candidateId = candidateId;
	}

	public Duration getLeaseDuration() {
		return this.leaseDuration;
	}

	public void setLeaseDuration(Duration leaseDuration) {
		this.leaseDuration = leaseDuration;
	}

	public Duration getRenewDeadline() {
		return this.renewDeadline;
	}

	public void setRenewDeadline(Duration renewDeadline) {
		this.renewDeadline = renewDeadline;
	}

	public Duration getRetryPeriod() {
		return this.retryPeriod;
	}

	public void setRetryPeriod(Duration retryPeriod) {
		this.retryPeriod = retryPeriod;
	}

	public boolean isReleaseOnShutdown() {
		return this.releaseOnShutdown;
	}

	public void setReleaseOnShutdown(boolean releaseOnShutdown) {
		this.releaseOnShutdown = releaseOnShutdown;
	}

	public Duration getShutdownTimeout() {
		return this.shutdownTimeout;
	}

	public void setShutdownTimeout(Duration shutdownTimeout) {
		this.shutdownTimeout = shutdownTimeout;
	}

	/**
	 * The group to join: the configured one, else the application's name, else
	 * {@value #DEFAULT_GROUP}.
	 */
	public String determineGroup(Environment environment) {
		if (this.group != null) {
			return this.group;
		}
		String applicationName = environment.getProperty("spring.application.name");
		return StringUtils.hasText(applicationName) ? applicationName : DEFAULT_GROUP;
	}

}
