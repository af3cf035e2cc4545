package io.github.leaderelection.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties for leader election through Redis.
 */
@ConfigurationProperties("leader-election.redis")
public class LeaderElectionRedisProperties {

	/**
	 * Prefix of the keys and channels of every group, such as
	 * 'leader-election:{orders}:lease'. Letters, digits and '_', '.', ':', '-' (no '--'),
	 * starting with a letter.
	 */
	private String keyPrefix = "leader-election:";

	/**
	 * Number of replicas that must acknowledge each acquire and renewal (Redis WAIT) for
	 * it to count. 0 not to wait. Narrows, but does not close, the window in which a
	 * failover loses a lease.
	 */
	private int replicaAcks = 0;

	/**
	 * Maximum time to wait for the replica acknowledgements: with replica-acks set, at
	 * least 1ms and less than the retry period, which is the store call's timeout.
	 */
	private Duration replicaAckTimeout = Duration.ofMillis(500);

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public int getReplicaAcks() {
		return this.replicaAcks;
	}

	public void setReplicaAcks(int replicaAcks) {
		this.replicaAcks = replicaAcks;
	}

	public Duration getReplicaAckTimeout() {
		return this.replicaAckTimeout;
	}

	public void setReplicaAckTimeout(Duration replicaAckTimeout) {
		this.replicaAckTimeout = replicaAckTimeout;
	}

}
