package io.github.leaderelection.autoconfigure;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.OnlyOnLeader;
import io.github.leaderelection.aop.OnlyOnLeaderPointcut;
import io.github.leaderelection.scheduling.MissedTickPolicies;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.aop.MethodMatcher;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.framework.ProxyConfig;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.framework.ProxyProcessorSupport;
import org.springframework.aop.framework.autoproxy.AutoProxyUtils;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.config.SmartInstantiationAwareBeanPostProcessor;
import org.springframework.core.PriorityOrdered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Checks at startup that {@link OnlyOnLeader} can gate every method it applies to, and
 * joins the groups that the annotations name.
 *
 * <p>
 * A method that the proxy cannot intercept would run on every instance, with nothing but
 * Spring's generic proxy warning: a private or static method and, with class-based
 * proxies (the default), a final method. A final class cannot be proxied at all. Each
 * bean is checked just before it is proxied, so that a final class fails here rather than
 * in the proxy, and each bean definition's type once all singletons exist, so that lazy
 * beans fail startup too. The groups are joined then, so that their elections run from
 * the start rather than from the first call.
 */
final class OnlyOnLeaderBeans
		implements SmartInstantiationAwareBeanPostProcessor, SmartInitializingSingleton, PriorityOrdered {

	private static final Logger logger = LoggerFactory.getLogger(OnlyOnLeaderBeans.class);

	private final ConfigurableListableBeanFactory beanFactory;

	private final Supplier<MethodMatcher> gated;

	private final Supplier<LeaderElectionRegistry> registry;

	private final Supplier<String> defaultGroup;

	private final ProxyTypeEvaluation proxyTypes = new ProxyTypeEvaluation();

	private final Map<Class<?>, List<Method>> gatedMethods = new ConcurrentHashMap<>();

	/**
	 * Creates the checks. The suppliers are called on first use, not here: this is a bean
	 * post-processor, created before the beans they return.
	 * @param beanFactory the beans to check
	 * @param gated the methods that {@code @OnlyOnLeader} on a class applies to (the
	 * advisor's method matcher)
	 * @param registry the registry that joins the groups
	 * @param defaultGroup the group of annotations that name none
	 */
	OnlyOnLeaderBeans(ConfigurableListableBeanFactory beanFactory, Supplier<MethodMatcher> gated,
			Supplier<LeaderElectionRegistry> registry, Supplier<String> defaultGroup) {
		this.beanFactory = Objects.requireNonNull(beanFactory, "beanFactory");
		this.gated = Objects.requireNonNull(gated, "gated");
		this.registry = Objects.requireNonNull(registry, "registry");
		this.defaultGroup = Objects.requireNonNull(defaultGroup, "defaultGroup");
		ClassLoader classLoader = beanFactory.getBeanClassLoader();
		if (classLoader != null) {
			this.proxyTypes.setProxyClassLoader(classLoader);
		}
	}

	/** Ahead of the auto-proxy creator, which is ordered (not priority ordered) first. */
	@Override
	public int getOrder() {
		return HIGHEST_PRECEDENCE;
	}

	@Override
	public Object getEarlyBeanReference(Object bean, String beanName) {
		check(ClassUtils.getUserClass(bean), beanName);
		return bean;
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		check(ClassUtils.getUserClass(bean), beanName);
		return bean;
	}

	@Override
	public void afterSingletonsInstantiated() {
		Map<String, String> groups = new TreeMap<>();
		Set<Class<?>> scanned = new HashSet<>();
		for (String name : this.beanFactory.getBeanDefinitionNames()) {
			Class<?> type = typeOf(name);
			if (type != null && scanned.add(type)) {
				check(type, name);
				collectGroups(type, groups);
			}
		}
		LeaderElectionRegistry elections = this.registry.get();
		groups.forEach((group, declaredOn) -> {
			try {
				elections.join(group);
			}
			catch (IllegalArgumentException ex) {
				throw new LeaderElectionConfigurationException(
						"Invalid group '" + group + "' in @OnlyOnLeader on " + declaredOn + ": " + ex.getMessage(),
						"Set the group of @OnlyOnLeader on " + declaredOn + " to a name of at most 255 characters "
								+ "without control characters, or remove it to use the application's group "
								+ "(leader-election.group).",
						ex);
			}
		});
		if (!groups.isEmpty()) {
			logger.debug("Joined the groups named by @OnlyOnLeader: {}", groups.keySet());
		}
	}

	private @Nullable Class<?> typeOf(String beanName) {
		try {
			Class<?> type = this.beanFactory.getType(beanName, false);
			return (type != null) ? ClassUtils.getUserClass(type) : null;
		}
		catch (RuntimeException ex) {
			logger.trace("Could not determine the type of bean '{}'", beanName, ex);
			return null;
		}
	}

	private void collectGroups(Class<?> type, Map<String, String> groups) {
		OnlyOnLeader onType = AnnotatedElementUtils.findMergedAnnotation(type, OnlyOnLeader.class);
		if (onType != null) {
			groups.putIfAbsent(group(onType), type.getName());
		}
		for (Method method : gatedMethods(type)) {
			OnlyOnLeader onMethod = AnnotatedElementUtils.findMergedAnnotation(method, OnlyOnLeader.class);
			if (onMethod != null) {
				groups.putIfAbsent(group(onMethod), name(method));
			}
		}
	}

	private String group(OnlyOnLeader annotation) {
		return annotation.group().isEmpty() ? this.defaultGroup.get() : annotation.group();
	}

	/**
	 * Fails if a method of the given bean that {@code @OnlyOnLeader} applies to could run
	 * without the check, or if the bean could not be proxied at all.
	 */
	private void check(Class<?> type, String beanName) {
		List<Method> methods = gatedMethods(type);
		if (methods.isEmpty()) {
			return;
		}
		boolean classBased = isProxiedByClass(type, beanName);
		List<String> problems = new ArrayList<>();
		List<String> fixes = new ArrayList<>();
		if (classBased && Modifier.isFinal(type.getModifiers())) {
			problems.add("the class " + type.getName() + " is final, so no class-based proxy can be made for it");
			fixes.add("Remove final from class " + type.getName() + " (in Kotlin, declare it open), or declare its "
					+ "leader-only methods on an interface it implements and annotate the bean with "
					+ "@Proxyable(ProxyType.INTERFACES), so that it is proxied through its interfaces.");
		}
		for (Method method : methods) {
			int modifiers = method.getModifiers();
			if (Modifier.isStatic(modifiers)) {
				problems.add(
						name(method) + " is static, so no proxy can intercept it: it would run on every " + "instance");
				fixes.add("Make " + name(method) + " an instance method.");
			}
			else if (Modifier.isPrivate(modifiers)) {
				problems.add(name(method) + " is private, so no proxy can intercept it: it would run on every "
						+ "instance");
				fixes.add("Make " + name(method) + " public.");
			}
			else if (classBased && Modifier.isFinal(modifiers)) {
				problems.add(name(method) + " is final, so the class-based proxy cannot override it: it would run on "
						+ "every instance");
				fixes.add("Remove final from " + name(method) + " (in Kotlin, declare it open).");
			}
			OnlyOnLeader annotation = OnlyOnLeaderPointcut.find(method, type);
			if (annotation != null) {
				for (MissedTickPolicies.Problem problem : MissedTickPolicies.problems(method, annotation,
						name(method))) {
					problems.add(problem.problem());
					fixes.add(problem.fix());
				}
			}
		}
		if (!problems.isEmpty()) {
			String list = problems.stream().map((problem) -> "\n    - " + problem).collect(Collectors.joining());
			throw new LeaderElectionConfigurationException(
					"@OnlyOnLeader cannot gate bean '" + beanName + "' (" + type.getName() + "):" + list,
					String.join("\n", fixes));
		}
	}

	/**
	 * The methods of a class that {@code @OnlyOnLeader} applies to, whether a proxy can
	 * intercept them or not: those annotated themselves (or through a method they
	 * override or implement), and those that the advisor matches for an annotation on the
	 * class, which is about the bean's methods and leaves static ones out.
	 */
	private List<Method> gatedMethods(Class<?> type) {
		// Not computeIfAbsent: the advisor may be created on the way, and this runs for
		// it too.
		List<Method> known = this.gatedMethods.get(type);
		if (known == null) {
			known = findGatedMethods(type);
			this.gatedMethods.putIfAbsent(type, known);
		}
		return known;
	}

	private List<Method> findGatedMethods(Class<?> type) {
		if (!AnnotationUtils.isCandidateClass(type, OnlyOnLeader.class)) {
			return List.of();
		}
		MethodMatcher onType = AnnotatedElementUtils.hasAnnotation(type, OnlyOnLeader.class) ? this.gated.get() : null;
		List<Method> methods = new ArrayList<>();
		ReflectionUtils.doWithMethods(type, (method) -> {
			if (AnnotatedElementUtils.hasAnnotation(method, OnlyOnLeader.class)
					|| (onType != null && !Modifier.isStatic(method.getModifiers()) && onType.matches(method, type))) {
				methods.add(method);
			}
		}, ReflectionUtils.USER_DECLARED_METHODS);
		return List.copyOf(methods);
	}

	/**
	 * Whether the auto-proxy creator will proxy the bean by subclassing its class rather
	 * than through its interfaces, decided as Spring 7's {@code AbstractAutoProxyCreator}
	 * and {@code DefaultAopProxyFactory} do: the bean's own preference
	 * ({@code @Proxyable}) first, then the creator's setting
	 * ({@code spring.aop.proxy-target-class}), then whether the class has interfaces
	 * worth proxying. A JDK proxy or a lambda is always proxied through its interfaces.
	 */
	private boolean isProxiedByClass(Class<?> type, String beanName) {
		if (Proxy.isProxyClass(type) || ClassUtils.isLambdaClass(type)) {
			return false;
		}
		ProxyConfig creator = autoProxyCreator();
		if (creator != null && creator.isOptimize()) {
			return true;
		}
		if (this.beanFactory.containsBeanDefinition(beanName)) {
			if (AutoProxyUtils.shouldProxyTargetClass(this.beanFactory, beanName)) {
				return true;
			}
			Object exposed = this.beanFactory.getMergedBeanDefinition(beanName)
				.getAttribute(AutoProxyUtils.EXPOSED_INTERFACES_ATTRIBUTE);
			if (exposed instanceof Class<?> || (exposed instanceof Class<?>[] interfaces && interfaces.length > 0)) {
				return false;
			}
			if (exposed != null) {
				return !this.proxyTypes.proxiesInterfaces(type);
			}
		}
		// Without a creator the application has none of its own: the one registered for
		// @OnlyOnLeader proxies classes unless spring.aop.proxy-target-class=false.
		if (creator == null || creator.isProxyTargetClass()) {
			return true;
		}
		return !this.proxyTypes.proxiesInterfaces(type);
	}

	private @Nullable ProxyConfig autoProxyCreator() {
		String name = AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME;
		if (!this.beanFactory.containsBean(name) || this.beanFactory.isCurrentlyInCreation(name)) {
			return null;
		}
		return this.beanFactory.getBean(name, ProxyConfig.class);
	}

	/**
	 * A method as users write it in a message: {@code com.example.Jobs#run(String, int)}.
	 */
	static String name(Method method) {
		return method.getDeclaringClass().getName() + "#" + method.getName() + "("
				+ Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName).collect(Collectors.joining(", "))
				+ ")";
	}

	/**
	 * Spring's own rule for whether a class has interfaces that a proxy can implement
	 * instead.
	 */
	private static final class ProxyTypeEvaluation extends ProxyProcessorSupport {

		boolean proxiesInterfaces(Class<?> type) {
			ProxyFactory factory = new ProxyFactory();
			evaluateProxyInterfaces(type, factory);
			return !factory.isProxyTargetClass();
		}

	}

}
