package io.github.leaderelection;

import java.time.Duration;
import java.util.Objects;

/**
 * The three durations that govern an election, as in Kubernetes client-go.
 *
 * <ul>
 * <li>{@code leaseDuration}: how long the store keeps a lease that is not renewed; crash
 * failover takes at most {@code leaseDuration + retryPeriod}.</li>
 * <li>{@code renewDeadline}: how long a leader keeps believing after the start of its
 * last successful renewal. The gap to {@code leaseDuration} is the margin that absorbs
 * differences in clock rate between this process and the store.</li>
 * <li>{@code retryPeriod}: how often the leader renews and followers try: once per period
 * each node renews all the leases it holds in one request and reads all the groups it
 * follows in another, on a phase of its own, so that nodes do not hit the store together
 * and a released lease is taken within one retry period.</li>
 * </ul>
 *
 * @param leaseDuration lease kept by the store
 * @param renewDeadline local belief after the start of the last successful renewal
 * @param retryPeriod interval between renewals and attempts
 */
public record ElectionTiming(Duration leaseDuration, Duration renewDeadline, Duration retryPeriod) {

	/**
	 * The shortest retry period accepted: it is also the timeout of every store call, and
	 * a round trip to a store over a network, with a connection taken from a pool, needs
	 * that much headroom; below it every call of a networked store would time out and
	 * nobody would lead.
	 */
	public static final Duration MINIMUM_RETRY_PERIOD = Duration.ofMillis(100);

	/**
	 * 15s / 7s / 2s: client-go's lease and retry period, with a renew deadline short
	 * enough that the lease lasts at least two of them (see {@link #survivesRestores()}).
	 */
	public static final ElectionTiming DEFAULTS = new ElectionTiming(Duration.ofSeconds(15), Duration.ofSeconds(7),
			Duration.ofSeconds(2));

	public ElectionTiming {
		Objects.requireNonNull(leaseDuration, "leaseDuration");
		Objects.requireNonNull(renewDeadline, "renewDeadline");
		Objects.requireNonNull(retryPeriod, "retryPeriod");
		requirePositive("lease-duration", leaseDuration);
		requirePositive("renew-deadline", renewDeadline);
		requirePositive("retry-period", retryPeriod);
		if (retryPeriod.compareTo(MINIMUM_RETRY_PERIOD) < 0) {
			throw new IllegalArgumentException("retry-period must be at least " + MINIMUM_RETRY_PERIOD.toMillis()
					+ "ms (it is also the timeout of every store call) but is " + retryPeriod);
		}
		if (leaseDuration.compareTo(renewDeadline) <= 0) {
			throw new IllegalArgumentException(
					"lease-duration must be greater than renew-deadline, but lease-duration is " + leaseDuration
							+ " and renew-deadline is " + renewDeadline);
		}
		Duration minimumRenewDeadline = retryPeriod.multipliedBy(12).dividedBy(10);
		if (renewDeadline.compareTo(minimumRenewDeadline) <= 0) {
			throw new IllegalArgumentException(
					"renew-deadline must be greater than 1.2 x retry-period, but renew-deadline is " + renewDeadline
							+ " and 1.2 x retry-period is " + minimumRenewDeadline + " (retry-period " + retryPeriod
							+ ")");
		}
	}

	private static void requirePositive(String name, Duration duration) {
		if (duration.isNegative() || duration.isZero()) {
			throw new IllegalArgumentException(name + " must be positive but is " + duration);
		}
	}

	/**
	 * Whether the lease lasts at least two renew deadlines, which keeps one believer when
	 * the store goes back to an older copy of its data in the holder's own term (a
	 * restore, a replica that missed writes). The copy holds a renewal whose lease the
	 * next candidate may take once it runs out, while the holder believes from a later
	 * renewal that the copy lacks: that renewal started within one renew deadline of the
	 * copied one (or the holder had stopped believing), so the holder stops within two
	 * renew deadlines of it, before the copied lease runs out.
	 */
	public boolean survivesRestores() {
		return restoreOverlap().isZero();
	}

	/**
	 * How long two instances may lead at once when the store goes back to an older copy
	 * of its data in the holder's term: two renew deadlines less the lease, if positive.
	 */
	public Duration restoreOverlap() {
		Duration overlap = this.renewDeadline.multipliedBy(2).minus(this.leaseDuration);
		return overlap.isNegative() ? Duration.ZERO : overlap;
	}

	/**
	 * The timeout for one store call: one retry period, which the validation above keeps
	 * well below the renew deadline, so a hung call cannot outlive the leader's belief.
	 */
	public Duration storeCallTimeout() {
		return this.retryPeriod;
	}

}
