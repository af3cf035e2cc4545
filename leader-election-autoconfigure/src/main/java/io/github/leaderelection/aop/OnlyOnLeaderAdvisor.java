package io.github.leaderelection.aop;

import java.util.Objects;

import io.github.leaderelection.OnlyOnLeader;
import org.aopalliance.aop.Advice;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.core.Ordered;

/**
 * Applies an {@link OnlyOnLeaderInterceptor} to the methods that {@link OnlyOnLeader}
 * applies to.
 *
 * <p>
 * Declared as an infrastructure bean, it is picked up by whichever auto-proxy creator the
 * context has: AspectJ's when {@code aspectjweaver} is on the class path, Spring AOP's
 * otherwise. It has the highest precedence, so a follower skips the call before any other
 * advice (a transaction, a cache) starts.
 */
public class OnlyOnLeaderAdvisor extends AbstractPointcutAdvisor {

	private final Pointcut pointcut = new OnlyOnLeaderPointcut();

	private final OnlyOnLeaderInterceptor interceptor;

	public OnlyOnLeaderAdvisor(OnlyOnLeaderInterceptor interceptor) {
		this.interceptor = Objects.requireNonNull(interceptor, "interceptor");
		setOrder(Ordered.HIGHEST_PRECEDENCE);
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.interceptor;
	}

}
