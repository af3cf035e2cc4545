package io.github.leaderelection.benchmarks;

import java.time.Duration;

import io.github.leaderelection.ElectionTiming;

/**
 * Lease settings, and how each contender is configured from them so that the comparison
 * is fair: the same time until a crashed holder's lease runs out, the same leader renew
 * period.
 *
 * <ul>
 * <li>ours: lease-duration, renew-deadline, retry-period as given (ZooKeeper: session
 * timeout = lease-duration);</li>
 * <li>Spring Integration lock registries: time to live / expireAfter = lease-duration,
 * heartBeatMillis = retry-period, busyWait and idleBetweenTries at their defaults (50 ms,
 * 100 ms);</li>
 * <li>Spring Integration ZooKeeper LeaderInitiator: Curator session timeout =
 * lease-duration.</li>
 * </ul>
 */
record Timing(long leaseMs, long renewMs, long retryMs) {

	/** Short leases, so that 20 crash trials per contender fit in the run. */
	static final Timing FAILOVER = new Timing(3000, 2000, 500);

	/**
	 * The defaults of this starter: client-go's lease and retry period, a renew deadline
	 * of 7 s.
	 */
	static final Timing DEFAULTS = new Timing(15000, 7000, 2000);

	ElectionTiming election() {
		return new ElectionTiming(Duration.ofMillis(this.leaseMs), Duration.ofMillis(this.renewMs),
				Duration.ofMillis(this.retryMs));
	}

	/**
	 * The goal's bound for crash failover: lease-duration + 1.2 x retry-period + 100 ms.
	 */
	double crashBoundMs() {
		return this.leaseMs + 1.2 * this.retryMs + 100;
	}

	String args() {
		return this.leaseMs + "," + this.renewMs + "," + this.retryMs;
	}

	static Timing parse(String value) {
		String[] parts = value.split(",");
		return new Timing(Long.parseLong(parts[0]), Long.parseLong(parts[1]), Long.parseLong(parts[2]));
	}

	@Override
	public String toString() {
		return "lease " + this.leaseMs + " ms / renew deadline " + this.renewMs + " ms / retry " + this.retryMs + " ms";
	}

}
