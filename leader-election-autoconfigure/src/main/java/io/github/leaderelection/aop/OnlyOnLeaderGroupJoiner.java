package io.github.leaderelection.aop;

import java.lang.reflect.Method;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;

import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.OnlyOnLeader;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Joins, once every singleton exists, each group that an {@link OnlyOnLeader} annotation names on
 * a bean's class or methods, so that the group's election runs from the start rather than from
 * the first call.
 */
public class OnlyOnLeaderGroupJoiner implements SmartInitializingSingleton {

	private static final Logger logger = LoggerFactory.getLogger(OnlyOnLeaderGroupJoiner.class);

	private final ListableBeanFactory beanFactory;

	private final Supplier<LeaderElectionRegistry> registry;

	private final Supplier<String> defaultGroup;

	/**
	 * Creates a joiner.
	 * @param beanFactory the beans whose classes are scanned
	 * @param registry the registry that joins the groups
	 * @param defaultGroup the group of annotations that name none
	 */
	public OnlyOnLeaderGroupJoiner(ListableBeanFactory beanFactory, Supplier<LeaderElectionRegistry> registry,
			Supplier<String> defaultGroup) {
		this.beanFactory = Objects.requireNonNull(beanFactory, "beanFactory");
		this.registry = Objects.requireNonNull(registry, "registry");
		this.defaultGroup = Objects.requireNonNull(defaultGroup, "defaultGroup");
	}

	@Override
	public void afterSingletonsInstantiated() {
		Map<String, String> groups = new TreeMap<>();
		Set<Class<?>> scanned = new HashSet<>();
		for (String name : this.beanFactory.getBeanDefinitionNames()) {
			Class<?> type = typeOf(name);
			if (type != null && scanned.add(type)) {
				collectGroups(type, groups);
			}
		}
		LeaderElectionRegistry elections = this.registry.get();
		groups.forEach((group, declaredOn) -> {
			try {
				elections.join(group);
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalStateException(
						"Invalid group '" + group + "' in @OnlyOnLeader on " + declaredOn + ": " + ex.getMessage(), ex);
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
		ReflectionUtils.doWithMethods(type, (Method method) -> {
			OnlyOnLeader onMethod = AnnotatedElementUtils.findMergedAnnotation(method, OnlyOnLeader.class);
			if (onMethod != null) {
				groups.putIfAbsent(group(onMethod), type.getName() + "." + method.getName() + "()");
			}
		}, ReflectionUtils.USER_DECLARED_METHODS);
	}

	private String group(OnlyOnLeader annotation) {
		return annotation.group().isEmpty() ? this.defaultGroup.get() : annotation.group();
	}

}
