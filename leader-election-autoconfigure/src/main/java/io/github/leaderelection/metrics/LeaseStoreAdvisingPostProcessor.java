package io.github.leaderelection.metrics;

import java.lang.reflect.Modifier;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.DefaultPointcutAdvisor;

/**
 * Decorates the lease operations of every {@code LeaseStore} bean, by a proxy made before
 * the election engine gets the bean, with what a subclass records of each (a timer, an
 * observation) into a recorder looked up on each call until there is one: the stores are
 * created long before the meter or observation registry is ready. The proxy subclasses
 * the store's class when it can, so the bean keeps its type (a {@code JdbcLeaseStore}
 * stays injectable as one); a final class is proxied by its interfaces.
 *
 * @param <T> what the lease operations are recorded into
 */
abstract class LeaseStoreAdvisingPostProcessor<T> extends AbstractBeanFactoryAwareAdvisingPostProcessor {

	private final Supplier<@Nullable T> lookup;

	private volatile @Nullable T recorder;

	LeaseStoreAdvisingPostProcessor(Supplier<@Nullable T> lookup) {
		this.lookup = lookup;
		this.advisor = new DefaultPointcutAdvisor(new LeaseOperations(), (MethodInterceptor) this::invoke);
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

	/** A call that names no operation or no group goes on untouched. */
	private @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		String operation = LeaseOperations.name(invocation.getMethod());
		String group = LeaseOperations.group(invocation.getArguments());
		if (operation == null || group == null) {
			return invocation.proceed();
		}
		return intercept(invocation, operation, group);
	}

	/**
	 * Runs one lease operation.
	 * @param invocation the call
	 * @param operation the operation's name, such as {@code acquire}
	 * @param group the group it acts on
	 * @return the operation's result
	 * @throws Throwable what the operation threw
	 */
	abstract @Nullable Object intercept(MethodInvocation invocation, String operation, String group) throws Throwable;

	/** What to record into, or {@code null} while there is none yet. */
	final @Nullable T recorder() {
		T current = this.recorder;
		if (current == null) {
			current = this.lookup.get();
			this.recorder = current;
		}
		return current;
	}

}
