package io.github.leaderelection.metrics;

import java.util.function.Supplier;

import io.github.leaderelection.spi.LeaseStore;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

/**
 * Times the requests of every {@link LeaseStore} bean as
 * {@code leader.election.store.requests}, by decorating the bean with a proxy before the
 * election engine gets it.
 *
 * <p>
 * The proxy subclasses the store's class when it can, so the bean keeps its type (a
 * {@code JdbcLeaseStore} stays injectable as one); a final class is proxied by its
 * interfaces. Only the six lease operations are timed, as {@code read}, {@code acquire},
 * {@code renew}, {@code release}, {@code force} and {@code clear}; the outcome is
 * {@code success}, {@code rejected} (an acquire that found another holder, a renewal of a
 * lease no longer ours) or {@code failure} (an exception, such as a timeout).
 */
class TimedLeaseStorePostProcessor extends LeaseStoreAdvisingPostProcessor<LeaderElectionMetrics> {

	/**
	 * Creates a post-processor.
	 * @param metrics the meters to record into, looked up on each request until there are
	 * some (the stores are created long before the meter registry is ready)
	 */
	TimedLeaseStorePostProcessor(Supplier<@Nullable LeaderElectionMetrics> metrics) {
		super(metrics);
	}

	@Override
	@Nullable Object intercept(MethodInvocation invocation, String operation, String group) throws Throwable {
		long start = System.nanoTime();
		Object result;
		try {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			record(group, operation, "failure", start);
			throw ex;
		}
		record(group, operation, LeaseOperations.outcome(operation, result), start);
		return result;
	}

	private void record(String group, String operation, String outcome, long start) {
		long nanos = System.nanoTime() - start;
		LeaderElectionMetrics metrics = recorder();
		if (metrics != null) {
			metrics.recordStoreRequest(group, operation, outcome, nanos);
		}
	}

}
