package io.github.leaderelection.metrics;

import java.lang.reflect.Modifier;

import org.aopalliance.intercept.MethodInterceptor;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.DefaultPointcutAdvisor;

/**
 * Decorates the lease operations of every {@code LeaseStore} bean with an interceptor, by
 * a proxy made before the election engine gets the bean. The proxy subclasses the store's
 * class when it can, so the bean keeps its type (a {@code JdbcLeaseStore} stays
 * injectable as one); a final class is proxied by its interfaces.
 */
abstract class LeaseStoreAdvisingPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {

	LeaseStoreAdvisingPostProcessor(MethodInterceptor interceptor) {
		this.advisor = new DefaultPointcutAdvisor(new LeaseOperations(), interceptor);
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

}
