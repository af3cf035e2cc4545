package io.github.leaderelection.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

import io.github.leaderelection.OnlyOnLeader;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.annotation.Schedules;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Matches the methods that {@link OnlyOnLeader} applies to: annotated methods (on the
 * class or on an interface or superclass method they implement), and every public method
 * of an annotated class other than {@code equals}, {@code hashCode}, {@code toString} and
 * the rest of {@link Object}'s.
 */
public final class OnlyOnLeaderPointcut extends StaticMethodMatcherPointcut {

	@Override
	public boolean matches(Method method, Class<?> targetClass) {
		return find(method, targetClass) != null;
	}

	/**
	 * The annotation that applies to a method called on an instance of the given class; a
	 * method's own annotation wins over its class's.
	 * @param method the method
	 * @param targetClass the class of the instance it is called on, if known
	 * @return the annotation, or null when the method is not leader-only
	 */
	public static @Nullable OnlyOnLeader find(Method method, @Nullable Class<?> targetClass) {
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		OnlyOnLeader onMethod = AnnotatedElementUtils.findMergedAnnotation(specific, OnlyOnLeader.class);
		if (onMethod == null && specific != method) {
			onMethod = AnnotatedElementUtils.findMergedAnnotation(method, OnlyOnLeader.class);
		}
		if (onMethod != null) {
			return onMethod;
		}
		if (!Modifier.isPublic(method.getModifiers()) || isObjectMethod(method)) {
			return null;
		}
		Class<?> type = (targetClass != null) ? ClassUtils.getUserClass(targetClass) : method.getDeclaringClass();
		return AnnotatedElementUtils.findMergedAnnotation(type, OnlyOnLeader.class);
	}

	/**
	 * Whether a method called on an instance of the given class is {@code @Scheduled}.
	 */
	static boolean isScheduled(Method method, @Nullable Class<?> targetClass) {
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		return AnnotatedElementUtils.hasAnnotation(specific, Scheduled.class)
				|| AnnotatedElementUtils.hasAnnotation(specific, Schedules.class);
	}

	private static boolean isObjectMethod(Method method) {
		return ReflectionUtils.isObjectMethod(method) || AopUtils.isEqualsMethod(method)
				|| AopUtils.isHashCodeMethod(method) || AopUtils.isToStringMethod(method);
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof OnlyOnLeaderPointcut;
	}

	@Override
	public int hashCode() {
		return OnlyOnLeaderPointcut.class.hashCode();
	}

	@Override
	public String toString() {
		return "OnlyOnLeaderPointcut";
	}

}
