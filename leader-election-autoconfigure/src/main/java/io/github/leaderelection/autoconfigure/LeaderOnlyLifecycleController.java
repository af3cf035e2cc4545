package io.github.leaderelection.autoconfigure;

import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.lifecycle.LeaderOnlyLifecycle;
import org.aopalliance.intercept.MethodInterceptor;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.PropertyAccessorFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.Lifecycle;
import org.springframework.context.Phased;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.Ordered;

/**
 * Starts the {@link Lifecycle} beans bound to a group (by {@link LeaderOnlyLifecycle} or
 * by name) when this instance becomes its leader, and stops them when it stops leading,
 * in the manner of Spring Integration's role controller but driven by the election.
 *
 * <p>
 * As a bean post-processor it keeps the context from starting them at refresh: a
 * {@link SmartLifecycle} bean whose {@code isAutoStartup()} is true gets
 * {@code setAutoStartup(false)} when it has that property (as the listener containers of
 * Spring JMS, AMQP and Kafka do), and is otherwise wrapped in a proxy that answers
 * {@code false}. A plain {@code Lifecycle} is never started at refresh anyway. An
 * explicit {@code context.start()} still starts every lifecycle bean, these included.
 *
 * <p>
 * As a {@link LeaderElectionListener} (it must be added to the registry) it is called on
 * the election's event thread of the group: a revocation stops the group's beans, waiting
 * for each at most the stop timeout, before later listeners run and, on shutdown, before
 * the lease is released.
 */
final class LeaderOnlyLifecycleController
		implements BeanPostProcessor, SmartInitializingSingleton, LeaderElectionListener, Ordered {

	private static final Logger logger = LoggerFactory.getLogger(LeaderOnlyLifecycleController.class);

	/** The property that binds beans by name, named in error messages. */
	static final String BEANS_PROPERTY = "leader-election.lifecycle.beans";

	private final ConfigurableListableBeanFactory beanFactory;

	private final Supplier<LeaderElectionRegistry> registry;

	private final Supplier<String> defaultGroup;

	private final Collection<String> configuredBeanNames;

	private final Supplier<Duration> stopTimeout;

	/** Bound bean names and their groups. */
	private final Map<String, String> bindings = new ConcurrentHashMap<>();

	/**
	 * Creates a controller.
	 * @param beanFactory the beans to bind
	 * @param registry the elections that start and stop them
	 * @param defaultGroup the group of beans bound by name and of annotations that name
	 * none
	 * @param configuredBeanNames names of beans bound to the default group
	 * @param stopTimeout how long to wait for each bean to stop
	 */
	LeaderOnlyLifecycleController(ConfigurableListableBeanFactory beanFactory,
			Supplier<LeaderElectionRegistry> registry, Supplier<String> defaultGroup,
			Collection<String> configuredBeanNames, Supplier<Duration> stopTimeout) {
		this.beanFactory = Objects.requireNonNull(beanFactory, "beanFactory");
		this.registry = Objects.requireNonNull(registry, "registry");
		this.defaultGroup = Objects.requireNonNull(defaultGroup, "defaultGroup");
		this.configuredBeanNames = List.copyOf(configuredBeanNames);
		this.stopTimeout = Objects.requireNonNull(stopTimeout, "stopTimeout");
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (!(bean instanceof Lifecycle)) {
			return bean;
		}
		String group = declaredGroup(beanName);
		if (group == null) {
			return bean;
		}
		this.bindings.put(beanName, group);
		return withoutAutoStartup(bean, beanName);
	}

	/** The group a bean is bound to by the property or the annotation, or null. */
	private @Nullable String declaredGroup(String beanName) {
		if (this.configuredBeanNames.contains(beanName)) {
			return this.defaultGroup.get();
		}
		if (!this.beanFactory.containsBeanDefinition(beanName)) {
			return null;
		}
		LeaderOnlyLifecycle annotation = this.beanFactory.findAnnotationOnBean(beanName, LeaderOnlyLifecycle.class,
				false);
		if (annotation == null) {
			return null;
		}
		return annotation.group().isEmpty() ? this.defaultGroup.get() : annotation.group();
	}

	private Object withoutAutoStartup(Object bean, String beanName) {
		if (!(bean instanceof SmartLifecycle smart) || !smart.isAutoStartup()) {
			return bean;
		}
		BeanWrapper wrapper = PropertyAccessorFactory.forBeanPropertyAccess(bean);
		if (wrapper.isWritableProperty("autoStartup")) {
			wrapper.setPropertyValue("autoStartup", false);
			if (!smart.isAutoStartup()) {
				return bean;
			}
		}
		ProxyFactory factory = new ProxyFactory(bean);
		factory.setProxyTargetClass(!Modifier.isFinal(bean.getClass().getModifiers()));
		factory.addAdvice((MethodInterceptor) (invocation) -> ("isAutoStartup".equals(invocation.getMethod().getName())
				&& invocation.getMethod().getParameterCount() == 0) ? Boolean.FALSE : invocation.proceed());
		Object proxy = factory.getProxy(bean.getClass().getClassLoader());
		if (((SmartLifecycle) proxy).isAutoStartup()) {
			throw new IllegalStateException("Bean '" + beanName + "' runs only on the leader, but the context would "
					+ "start it on every instance: its isAutoStartup() returns true and cannot be overridden. Let it "
					+ "return false, or give it an autoStartup property.");
		}
		return proxy;
	}

	/**
	 * Checks that every declared bean exists and is a {@code Lifecycle}, and joins their
	 * groups.
	 */
	@Override
	public void afterSingletonsInstantiated() {
		for (String name : this.configuredBeanNames) {
			if (!this.beanFactory.containsBean(name)) {
				String lifecycleBeans = String.join(", ", new TreeSet<>(
						Arrays.asList(this.beanFactory.getBeanNamesForType(Lifecycle.class, true, false))));
				throw misconfigured(BEANS_PROPERTY + " names bean '" + name + "', but there is no such bean.",
						"Name Lifecycle beans that run only on the leader in " + BEANS_PROPERTY + ", or remove '" + name
								+ "'. The Lifecycle beans of this context are: "
								+ (lifecycleBeans.isEmpty() ? "none" : lifecycleBeans) + ".",
						null);
			}
			requireBound(name, BEANS_PROPERTY + " names bean '" + name + "'");
		}
		for (String name : this.beanFactory.getBeanNamesForAnnotation(LeaderOnlyLifecycle.class)) {
			requireBound(name, "Bean '" + name + "' is annotated with @LeaderOnlyLifecycle");
		}
		LeaderElectionRegistry elections = this.registry.get();
		new TreeSet<>(this.bindings.values()).forEach((group) -> {
			try {
				elections.join(group);
			}
			catch (IllegalArgumentException ex) {
				throw misconfigured(
						"Invalid group '" + group + "' of a leader-only lifecycle bean: " + ex.getMessage() + ".",
						"Set the group of @LeaderOnlyLifecycle to a name of at most 255 characters without control "
								+ "characters, or remove it to use the application's group.",
						ex);
			}
		});
		if (!this.bindings.isEmpty()) {
			logger.debug("Lifecycle beans that run only on the leader: {}", this.bindings);
		}
	}

	private void requireBound(String name, String declaration) {
		// Creates a lazy bean, which binds it.
		Object bean = this.beanFactory.getBean(name);
		if (!this.bindings.containsKey(name)) {
			throw misconfigured(
					declaration + ", but it is a " + bean.getClass().getName()
							+ ", not a Lifecycle (such as a SmartLifecycle message listener container).",
					"Only Lifecycle beans can be started and stopped with leadership: remove '" + name + "' from "
							+ BEANS_PROPERTY + " or its @LeaderOnlyLifecycle, and use @OnlyOnLeader for methods.",
					null);
		}
	}

	/**
	 * A bad binding or a declaration that cannot work, thrown while the context starts
	 * and explained by the failure analyzer.
	 */
	private static RuntimeException misconfigured(String description, String action, @Nullable Throwable cause) {
		return new LeaderElectionConfigurationException(description, action, cause);
	}

	@Override
	public void granted(Leadership leadership) {
		for (String name : beansOf(leadership.group(), false)) {
			if (!leadership.isValid()) {
				logger.debug("Not starting the rest of group '{}''s leader-only beans: term {} already ended",
						leadership.group(), leadership.term());
				return;
			}
			Lifecycle bean = this.beanFactory.getBean(name, Lifecycle.class);
			if (bean.isRunning()) {
				continue;
			}
			try {
				bean.start();
				logger.debug("Started leader-only bean '{}' of group '{}' (term {})", name, leadership.group(),
						leadership.term());
			}
			catch (RuntimeException ex) {
				logger.error("Could not start leader-only bean '{}' of group '{}' (term {})", name, leadership.group(),
						leadership.term(), ex);
			}
		}
	}

	@Override
	public void revoked(Leadership leadership, RevocationReason reason) {
		long deadline = System.nanoTime() + this.stopTimeout.get().toNanos();
		for (String name : beansOf(leadership.group(), true)) {
			Lifecycle bean = this.beanFactory.getBean(name, Lifecycle.class);
			if (bean.isRunning()) {
				stop(name, bean, leadership, deadline);
			}
		}
	}

	private void stop(String name, Lifecycle bean, Leadership leadership, long deadline) {
		try {
			if (bean instanceof SmartLifecycle smart) {
				CountDownLatch stopped = new CountDownLatch(1);
				smart.stop(stopped::countDown);
				if (!stopped.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
					logger.warn("Leader-only bean '{}' of group '{}' did not stop within {} of the end of term {}",
							name, leadership.group(), this.stopTimeout.get(), leadership.term());
					return;
				}
			}
			else {
				bean.stop();
			}
			logger.debug("Stopped leader-only bean '{}' of group '{}' (term {})", name, leadership.group(),
					leadership.term());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (RuntimeException ex) {
			logger.error("Could not stop leader-only bean '{}' of group '{}' (term {})", name, leadership.group(),
					leadership.term(), ex);
		}
	}

	/** The names of a group's beans, in start order (or stop order when reversed). */
	private List<String> beansOf(String group, boolean reversed) {
		Comparator<String> byPhase = Comparator.comparingInt(this::phase);
		return this.bindings.entrySet()
			.stream()
			.filter((binding) -> binding.getValue().equals(group))
			.map(Map.Entry::getKey)
			.sorted(reversed ? byPhase.reversed() : byPhase)
			.toList();
	}

	private int phase(String name) {
		return (this.beanFactory.getBean(name) instanceof Phased phased) ? phased.getPhase() : 0;
	}

	/**
	 * The names of the beans bound to leadership, with their groups.
	 */
	public Map<String, String> bindings() {
		return Map.copyOf(this.bindings);
	}

	/**
	 * Comes right after the {@code @OnlyOnLeader} guard, before the listeners that
	 * publish events, so that a revoked leader stops its beans as soon as it can.
	 */
	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE + 100;
	}

}
