package io.github.leaderelection.aop;

import java.lang.reflect.Method;
import java.util.Objects;
import java.util.function.Supplier;

import io.github.leaderelection.Leadership;
import io.github.leaderelection.RunOutcome;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

import org.springframework.core.MethodParameter;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;

/**
 * The gate of a leader-only method that returns a deferred reactive type ({@code Mono},
 * {@code Flux}, or any type with a {@link ReactiveAdapterRegistry} adapter whose work
 * starts at subscription): the call returns at once a publisher of that type, and each
 * subscription to it asks the gate again, then calls the method and subscribes to what it
 * returns. Spring's {@code @Scheduled} obtains a reactive method's publisher once, at
 * startup, and subscribes to it at every trigger; gated this way, each trigger runs on
 * whichever instance leads then.
 *
 * <p>
 * A Kotlin {@code suspend} method is gated the same way: through a proxy, Spring invokes
 * it as a {@code Mono} or {@code Flux} that runs the function at each subscription, and
 * the proxy awaits the publisher the advice returns (or turns it into a {@code Flow}).
 *
 * <p>
 * The work's subscriber sees the {@link Leadership} in its Reactor context (key
 * {@code Leadership.class}), which a coroutine reads from its {@code ReactorContext}.
 * Used only when Reactor is on the class path, as Spring's reactive scheduling requires.
 */
final class ReactiveGate {

	private static final String FLOW_CLASS_NAME = "kotlinx.coroutines.flow.Flow";

	private final ReactiveAdapter adapter;

	private ReactiveGate(ReactiveAdapter adapter) {
		this.adapter = adapter;
	}

	/**
	 * The gate for methods returning the given type, or null if calls to them are to be
	 * gated when they are made (not a deferred reactive type). Call only with Reactor on
	 * the class path: this class links to it.
	 */
	static @Nullable ReactiveGate forReturnType(Class<?> returnType) {
		if (returnType == void.class || returnType == Object.class) {
			return null;
		}
		ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(returnType);
		return (adapter != null && adapter.getDescriptor().isDeferred()) ? new ReactiveGate(adapter) : null;
	}

	/**
	 * The gate for a Kotlin suspending function, called through a proxy with the
	 * coroutine bridge on the class path: Spring then invokes it as a publisher (a
	 * {@code Flux} for one returning a {@code Flow} or a publisher other than a
	 * {@code Mono}, else a {@code Mono}), and its proxy awaits, or turns into a
	 * {@code Flow}, whatever the advice returns: a publisher of that same type.
	 */
	static ReactiveGate forSuspendingFunction(Method method) {
		Class<?> returnType = new MethodParameter(method, -1).getParameterType();
		boolean many = !Mono.class.isAssignableFrom(returnType)
				&& (Publisher.class.isAssignableFrom(returnType) || isFlow(returnType));
		ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance()
			.getAdapter(many ? Flux.class : Mono.class);
		return new ReactiveGate(Objects.requireNonNull(adapter, "Reactor's adapter"));
	}

	/** By name: this class must load without Kotlin. */
	private static boolean isFlow(Class<?> type) {
		if (FLOW_CLASS_NAME.equals(type.getName())) {
			return true;
		}
		for (Class<?> implemented : type.getInterfaces()) {
			if (isFlow(implemented)) {
				return true;
			}
		}
		return type.getSuperclass() != null && isFlow(type.getSuperclass());
	}

	/**
	 * A publisher of the method's return type whose every subscription first asks
	 * {@code start}: null skips it (the subscriber completes at once, empty); a
	 * subscription runs the method's work, until it ends or is revoked.
	 */
	Object defer(Supplier<@Nullable ReactiveRun> start) {
		Flux<Object> eachSubscription = Flux.defer(() -> {
			ReactiveRun run = start.get();
			if (run == null) {
				return Flux.empty();
			}
			Publisher<?> work;
			try {
				Object returned = run.callMethod();
				work = (returned != null) ? this.adapter.toPublisher(returned) : Mono.empty();
			}
			catch (Throwable ex) {
				run.end(RunOutcome.FAILED);
				return Flux.error(ex);
			}
			return Flux.<Object>from(work)
				.takeUntilOther(Mono.fromFuture(run.revoked(), true))
				.contextWrite((context) -> context.put(Leadership.class, run.leadership()))
				.doFinally((signal) -> run.end(outcome(signal, run)));
		});
		return this.adapter.fromPublisher(eachSubscription);
	}

	/** A revocation that stopped the work completes it: that is a cancellation too. */
	private static RunOutcome outcome(SignalType signal, ReactiveRun run) {
		if (signal == SignalType.ON_ERROR) {
			return RunOutcome.FAILED;
		}
		if (signal == SignalType.CANCEL || run.revoked().isDone()) {
			return RunOutcome.CANCELLED;
		}
		return RunOutcome.SUCCEEDED;
	}

}
