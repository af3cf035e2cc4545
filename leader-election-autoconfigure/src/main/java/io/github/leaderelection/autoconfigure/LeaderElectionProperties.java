package io.github.leaderelection.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.leaderelection.jobs.MissedTicks;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.env.Environment;
import org.springframework.util.StringUtils;
import org.springframework.util.unit.DataSize;

/**
 * Configuration properties for leader election. Their ranges are checked once they are
 * bound, before any store or client uses them.
 */
@ConfigurationProperties("leader-election")
public class LeaderElectionProperties implements InitializingBean {

	/** Group joined when no group is configured and the application has no name. */
	static final String DEFAULT_GROUP = "default";

	/** The largest balance weight accepted. */
	static final int MAX_BALANCE_WEIGHT = 1000;

	/** The largest number of partitions of one partitioned group. */
	static final int MAX_PARTITIONS = 10_000;

	/**
	 * Whether to enable leader election. When disabled, there is no election: every
	 * instance leads every group in term 0 and runs the methods annotated with
	 * OnlyOnLeader.
	 */
	private boolean enabled = true;

	/**
	 * Store to elect through. When not set, it is detected from the application's beans:
	 * a DataSource selects jdbc, a RedisConnectionFactory selects redis, a
	 * CuratorFramework or 'leader-election.zookeeper.connect-string' selects zookeeper, a
	 * jetcd Client or 'leader-election.etcd.endpoints' selects etcd.
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
	 * renew deadline, and at most 1d.
	 */
	private Duration leaseDuration = Duration.ofSeconds(15);

	/**
	 * How long a leader keeps leading after the start of its last successful renewal.
	 * Must be greater than 1.2 times the retry period, and at most 1d. At most half the
	 * lease duration keeps one leader when the store goes back to an older copy of its
	 * data; a longer one logs a WARN at startup.
	 */
	private Duration renewDeadline = Duration.ofSeconds(7);

	/**
	 * Interval between a leader's renewals and between a follower's attempts to lead.
	 * Also the timeout of every store call. At least 100ms and at most 1d.
	 */
	private Duration retryPeriod = Duration.ofSeconds(2);

	/**
	 * Whether to release held leases on shutdown, so that another instance takes over at
	 * once rather than when the lease runs out.
	 */
	private boolean releaseOnShutdown = true;

	/**
	 * Whether an instance leads a group only once it has followed it for one lease
	 * duration, so that a lease record lost, wiped or restored from an older copy before
	 * the instance started never gives two leaders. The first election after the whole
	 * cluster starts then takes one lease duration longer.
	 */
	private boolean watchBeforeLeading;

	/**
	 * Maximum time to wait on shutdown for running OnlyOnLeader methods before the leases
	 * are released. Positive, at most 1h.
	 */
	private Duration shutdownTimeout = Duration.ofSeconds(10);

	private final Balance balance = new Balance();

	private final Endpoint endpoint = new Endpoint();

	private final Jobs jobs = new Jobs();

	/**
	 * Partitioned groups to join, by name, with their number of partitions (from 1 to
	 * 10000): partition i of 'orders' is the group 'orders/i'. With balancing on, each
	 * instance owns its share of them (LeaderElectionRegistry.ownedPartitions).
	 */
	private Map<String, Integer> partitions = new LinkedHashMap<>();

	public boolean isEnabled() {
		return this.enabled;
	}

	public Endpoint getEndpoint() {
		return this.endpoint;
	}

	public Jobs getJobs() {
		return this.jobs;
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
	 * Scheduled OnlyOnLeader methods: their runs recorded in the store, and the ticks
	 * missed while no instance led.
	 */
	public static class Jobs {

		/**
		 * Whether each tick of a scheduled OnlyOnLeader method is claimed in the store
		 * before it runs, so that it runs at most once across the instances, and its runs
		 * are recorded there. When off, such a method is only gated: a tick can run twice
		 * across a hand-over, and the ticks missed are not caught up.
		 */
		private boolean runRecords = true;

		/**
		 * What the next leader does with the ticks of a cron or fixed-rate OnlyOnLeader
		 * method that passed while no instance led its group, unless the annotation says:
		 * run the method once for all of them, as a Quartz cron trigger's 'fire once
		 * now', or skip them.
		 */
		private MissedTicksAction missedTicks = MissedTicksAction.RUN_ONCE;

		/**
		 * How old the newest missed tick may be for the next leader to run it, unless the
		 * annotation says. When not set, any age.
		 */
		private @Nullable Duration missedTickMaxAge;

		public boolean isRunRecords() {
			return this.runRecords;
		}

		public void setRunRecords(boolean runRecords) {
			this.runRecords = runRecords;
		}

		public MissedTicksAction getMissedTicks() {
			return this.missedTicks;
		}

		public void setMissedTicks(MissedTicksAction missedTicks) {
			this.missedTicks = missedTicks;
		}

		public @Nullable Duration getMissedTickMaxAge() {
			return this.missedTickMaxAge;
		}

		public void setMissedTickMaxAge(@Nullable Duration missedTickMaxAge) {
			this.missedTickMaxAge = missedTickMaxAge;
		}

		/**
		 * The policy these properties describe.
		 * @return the policy of annotations that set none
		 */
		public MissedTicks toPolicy() {
			return new MissedTicks(this.missedTicks == MissedTicksAction.RUN_ONCE, this.missedTickMaxAge);
		}

	}

	/**
	 * What the next leader does with the ticks missed while no instance led.
	 */
	public enum MissedTicksAction {

		/** Run the method once, for all of them. */
		RUN_ONCE,

		/** Skip them. */
		SKIP

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
		 * This instance's weight, from 1 to 1000: its share of the groups is in
		 * proportion to it (2 leads twice as many as 1).
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

	public boolean isWatchBeforeLeading() {
		return this.watchBeforeLeading;
	}

	public void setWatchBeforeLeading(boolean watchBeforeLeading) {
		this.watchBeforeLeading = watchBeforeLeading;
	}

	public Duration getShutdownTimeout() {
		return this.shutdownTimeout;
	}

	public void setShutdownTimeout(Duration shutdownTimeout) {
		this.shutdownTimeout = shutdownTimeout;
	}

	/**
	 * Checks the ranges of the durations and sizes, so that a value out of range fails
	 * startup naming its property rather than overflowing in the engine or a client.
	 * Values that are not positive, and the relations between the three timing durations,
	 * are reported by the engine's own checks, with all three values.
	 * @throws LeaderElectionConfigurationException naming the property and the fix
	 */
	@Override
	public void afterPropertiesSet() {
		DurationBounds.requireAtMost("leader-election.lease-duration", this.leaseDuration, DurationBounds.ONE_DAY,
				"how long the store keeps a lease that is not renewed, for example 15s (the default)");
		DurationBounds.requireAtMost("leader-election.renew-deadline", this.renewDeadline, DurationBounds.ONE_DAY,
				"how long a leader keeps leading after its last renewal, less than leader-election.lease-duration, "
						+ "for example 10s (the default)");
		DurationBounds.requireAtMost("leader-election.retry-period", this.retryPeriod, DurationBounds.ONE_DAY,
				"the interval between renewals and attempts, less than leader-election.renew-deadline / 1.2, for "
						+ "example 2s (the default)");
		DurationBounds.requirePositiveAtMost("leader-election.shutdown-timeout", this.shutdownTimeout,
				DurationBounds.ONE_HOUR, "how long shutdown may wait for running @OnlyOnLeader methods before the "
						+ "leases are released, for example 10s (the default)");
		Duration maxAge = this.jobs.getMissedTickMaxAge();
		if (maxAge != null) {
			DurationBounds.requirePositiveAtMost("leader-election.jobs.missed-tick-max-age", maxAge,
					DurationBounds.ONE_YEAR, "how old the newest missed tick may be for the next leader to run it, "
							+ "for example 1h, or remove it for any age");
		}
		if (this.balance.getWeight() > MAX_BALANCE_WEIGHT) {
			throw new LeaderElectionConfigurationException(
					"Invalid value '" + this.balance.getWeight()
							+ "' for leader-election.balance.weight: it must be at " + "most " + MAX_BALANCE_WEIGHT,
					"Set leader-election.balance.weight to this instance's share relative to the others, a whole "
							+ "number from 1 (the default) to " + MAX_BALANCE_WEIGHT + ".");
		}
		this.partitions.forEach((name, count) -> {
			if (count != null && count > MAX_PARTITIONS) {
				throw new LeaderElectionConfigurationException(
						"Invalid value '" + count + "' for leader-election.partitions." + name + ": it must be at most "
								+ MAX_PARTITIONS,
						"Set leader-election.partitions." + name + " to a number of partitions from 1 to "
								+ MAX_PARTITIONS + ", for example 64.");
			}
		});
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
