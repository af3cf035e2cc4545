package io.github.leaderelection.metrics;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.RootClassFilter;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.util.ReflectionUtils;

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
public class TimedLeaseStorePostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {

	private static final Map<String, String> OPERATIONS = Map.of("read", "read", "tryAcquire", "acquire", "renew",
			"renew", "release", "release", "forceLeader", "force", "clear", "clear");

	/**
	 * Creates a post-processor.
	 * @param metrics the meters to record into, looked up on each request until there are
	 * some (the stores are created long before the meter registry is ready)
	 */
	public TimedLeaseStorePostProcessor(Supplier<@Nullable LeaderElectionMetrics> metrics) {
		this.advisor = new DefaultPointcutAdvisor(new LeaseOperations(), new TimingInterceptor(metrics));
		this.beforeExistingAdvisors = true;
	}

	@Override
	protected ProxyFactory prepareProxyFactory(Object bean, String beanName) {
		ProxyFactory factory = super.prepareProxyFactory(bean, beanName);
		if (!Modifier.isFinal(bean.getClass().getModifiers())) {
			factory.setProxyTargetClass(true);
		}
		return factory;
	}

	/** Matches the timed methods of every lease store. */
	private static final class LeaseOperations extends StaticMethodMatcherPointcut {

		LeaseOperations() {
			setClassFilter(new RootClassFilter(LeaseStore.class));
		}

		@Override
		public boolean matches(Method method, Class<?> targetClass) {
			String name = method.getName();
			return OPERATIONS.containsKey(name)
					&& ReflectionUtils.findMethod(LeaseStore.class, name, method.getParameterTypes()) != null;
		}

	}

	private static final class TimingInterceptor implements MethodInterceptor {

		private final Supplier<@Nullable LeaderElectionMetrics> metricsLookup;

		private volatile @Nullable LeaderElectionMetrics metrics;

		TimingInterceptor(Supplier<@Nullable LeaderElectionMetrics> metricsLookup) {
			this.metricsLookup = metricsLookup;
		}

		@Override
		public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
			String operation = OPERATIONS.get(invocation.getMethod().getName());
			String group = group(invocation.getArguments());
			if (operation == null || group == null) {
				return invocation.proceed();
			}
			long start = System.nanoTime();
			Object result;
			try {
				result = invocation.proceed();
			}
			catch (Throwable ex) {
				record(group, operation, "failure", start);
				throw ex;
			}
			record(group, operation, outcome(operation, result), start);
			return result;
		}

		private void record(String group, String operation, String outcome, long start) {
			long nanos = System.nanoTime() - start;
			LeaderElectionMetrics current = this.metrics;
			if (current == null) {
				current = this.metricsLookup.get();
				this.metrics = current;
			}
			if (current != null) {
				current.recordStoreRequest(group, operation, outcome, nanos);
			}
		}

		private static String outcome(String operation, @Nullable Object result) {
			boolean rejected = switch (operation) {
				case "acquire" -> result instanceof Optional<?> lease && lease.isEmpty();
				case "renew" -> Boolean.FALSE.equals(result);
				default -> false;
			};
			return rejected ? "rejected" : "success";
		}

		private static @Nullable String group(@Nullable Object[] arguments) {
			if (arguments.length == 0) {
				return null;
			}
			if (arguments[0] instanceof String group) {
				return group;
			}
			return (arguments[0] instanceof Lease lease) ? lease.group() : null;
		}

	}

}
