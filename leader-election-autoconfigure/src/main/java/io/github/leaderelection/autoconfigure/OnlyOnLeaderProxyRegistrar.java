package io.github.leaderelection.autoconfigure;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Makes sure the context has an auto-proxy creator that applies the {@code @OnlyOnLeader}
 * advisor, as {@code @EnableTransactionManagement} does for transactions, so that the
 * annotation is never silently ignored, not even with {@code spring.aop.auto=false}.
 * Boot's AOP auto-configuration, when active, upgrades it to the AspectJ-aware one.
 * Classes are proxied unless {@code spring.aop.proxy-target-class=false}, as with Boot's.
 */
class OnlyOnLeaderProxyRegistrar implements ImportBeanDefinitionRegistrar {

	private final Environment environment;

	OnlyOnLeaderProxyRegistrar(Environment environment) {
		this.environment = environment;
	}

	@Override
	public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
		AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
		if (this.environment.getProperty("spring.aop.proxy-target-class", Boolean.class, true)) {
			AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
		}
	}

}
