package io.github.leaderelection.metrics;

import java.lang.reflect.Method;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.github.leaderelection.spi.AdminLeaseStore;
import io.github.leaderelection.spi.BatchLeaseStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.RootClassFilter;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.util.ReflectionUtils;

/**
 * The lease operations of every {@link LeaseStore}, as the timer and the observation of
 * store calls name them ({@code read}, {@code acquire}, {@code renew}, {@code release},
 * {@code force}, {@code clear}, and the batches of a node's rounds, {@code acquire-all},
 * {@code renew-all} and {@code read-all}), and the pointcut that matches them.
 */
final class LeaseOperations extends StaticMethodMatcherPointcut {

	/** The group tag of a batch, which acts on all the groups of a node's round. */
	static final String ALL_GROUPS = "*";

	private static final Map<String, String> NAMES = Map.of("read", "read", "tryAcquire", "acquire", "renew", "renew",
			"release", "release", "forceLeader", "force", "clear", "clear", "tryAcquireAll", "acquire-all", "renewAll",
			"renew-all", "readAll", "read-all");

	/** Where the operations are declared: the four calls, the batches, the operator's. */
	private static final List<Class<?>> DECLARING = List.of(LeaseStore.class, BatchLeaseStore.class,
			AdminLeaseStore.class);

	LeaseOperations() {
		setClassFilter(new RootClassFilter(LeaseStore.class));
	}

	@Override
	public boolean matches(Method method, Class<?> targetClass) {
		String name = method.getName();
		return NAMES.containsKey(name) && DECLARING.stream()
			.anyMatch((type) -> ReflectionUtils.findMethod(type, name, method.getParameterTypes()) != null);
	}

	/** The operation's name, or {@code null} for another method. */
	static @Nullable String name(Method method) {
		return NAMES.get(method.getName());
	}

	/**
	 * {@code rejected} for an acquire that found another holder or a renewal of a lease
	 * no longer ours, else {@code success}.
	 */
	static String outcome(String operation, @Nullable Object result) {
		boolean rejected = switch (operation) {
			case "acquire" -> result instanceof Optional<?> lease && lease.isEmpty();
			case "renew" -> Boolean.FALSE.equals(result);
			default -> false;
		};
		return rejected ? "rejected" : "success";
	}

	/**
	 * The group an operation acts on, from its first argument; {@value #ALL_GROUPS} for a
	 * batch, which acts on many.
	 */
	static @Nullable String group(@Nullable Object[] arguments) {
		if (arguments.length == 0) {
			return null;
		}
		if (arguments[0] instanceof String group) {
			return group;
		}
		if (arguments[0] instanceof Collection<?>) {
			return ALL_GROUPS;
		}
		return (arguments[0] instanceof Lease lease) ? lease.group() : null;
	}

}
