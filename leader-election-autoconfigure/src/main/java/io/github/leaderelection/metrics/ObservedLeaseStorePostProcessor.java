package io.github.leaderelection.metrics;

import java.util.function.Supplier;

import io.github.leaderelection.spi.LeaseStore;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

/**
 * Wraps the lease operations of every {@link LeaseStore} bean in a Micrometer
 * {@link Observation} named {@value #STORE_CALL}, so that traces show the election's
 * store calls next to the application's own. Low-cardinality key values:
 * {@code operation} ({@code read}, {@code acquire}, {@code renew}, {@code release},
 * {@code force}, {@code clear}), {@code backend} and {@code outcome} ({@code success},
 * {@code rejected}, {@code failure}); high-cardinality: {@code group}.
 *
 * <p>
 * Apart from the {@code leader.election.store.requests} timer, which stays as it is: this
 * observation has a name of its own, so a meter handler that also turns observations into
 * timers does not count the same requests under the same name twice.
 */
class ObservedLeaseStorePostProcessor extends LeaseStoreAdvisingPostProcessor<ObservationRegistry> {

	/** The name of the observation of one store call. */
	static final String STORE_CALL = "leader.election.store.call";

	/**
	 * Creates a post-processor.
	 * @param registry the observation registry, looked up on each call until there is one
	 * (the stores are created before it is ready)
	 */
	ObservedLeaseStorePostProcessor(Supplier<@Nullable ObservationRegistry> registry) {
		super(registry);
	}

	@Override
	@Nullable Object intercept(MethodInvocation invocation, String operation, String group) throws Throwable {
		ObservationRegistry registry = recorder();
		if (registry == null || registry.isNoop() || !(invocation.getThis() instanceof LeaseStore store)) {
			return invocation.proceed();
		}
		Observation observation = Observation.createNotStarted(STORE_CALL, registry)
			.lowCardinalityKeyValue("operation", operation)
			.lowCardinalityKeyValue("backend", store.backend())
			.highCardinalityKeyValue("group", group)
			.start();
		try (Observation.Scope scope = observation.openScope()) {
			Object result = invocation.proceed();
			observation.lowCardinalityKeyValue("outcome", LeaseOperations.outcome(operation, result));
			return result;
		}
		catch (Throwable ex) {
			observation.lowCardinalityKeyValue("outcome", "failure");
			observation.error(ex);
			throw ex;
		}
		finally {
			observation.stop();
		}
	}

}
