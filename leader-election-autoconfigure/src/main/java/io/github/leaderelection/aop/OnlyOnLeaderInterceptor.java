package io.github.leaderelection.aop;

import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.LeadershipContext;
import io.github.leaderelection.OnlyOnLeader;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.TargetClassAware;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodClassKey;
import org.springframework.core.Ordered;
import org.springframework.util.ClassUtils;

/**
 * Runs {@link OnlyOnLeader} methods only while this instance leads their group, and keeps
 * track of the calls that run so that a revocation can interrupt them and a shutdown can
 * wait for them.
 *
 * <p>
 * The check is a lookup in a cache keyed by method (and target class) and one call of
 * {@link LeaderElection#leadership()}: no I/O, no lock. A skipped call is logged at
 * DEBUG.
 *
 * <p>
 * A method that returns a deferred reactive type, and a Kotlin {@code suspend} method, is
 * gated at each subscription instead ({@link ReactiveGate}), and its work is tracked
 * until it ends.
 *
 * <p>
 * As a {@link LeaderElectionListener} (it must be added to the registry) it interrupts,
 * on any revocation, the calls of the revoked term whose annotation asks for it, and on a
 * {@link RevocationReason#SHUTDOWN shutdown} revocation it waits, for at most the
 * shutdown timeout counted from the first one, until the group's running calls have
 * returned. The engine releases the leases only after its listeners returned, so a
 * follower does not take over while leader-only work still runs here. Its order is
 * {@link Ordered#HIGHEST_PRECEDENCE}: it should come before listeners that publish
 * events, so that an interruption is not delayed by them.
 */
public class OnlyOnLeaderInterceptor implements MethodInterceptor, LeaderElectionListener, Ordered {

	private static final Logger logger = LoggerFactory.getLogger(OnlyOnLeaderInterceptor.class);

	/**
	 * Reactive methods are gated at subscription only with Reactor, as Spring needs it.
	 */
	private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Flux",
			OnlyOnLeaderInterceptor.class.getClassLoader());

	/**
	 * Spring calls a Kotlin suspending function as a publisher only with the coroutine
	 * bridge to Reactor.
	 */
	private static final boolean COROUTINES_REACTOR_PRESENT = ClassUtils.isPresent("kotlinx.coroutines.reactor.MonoKt",
			OnlyOnLeaderInterceptor.class.getClassLoader());

	private final Supplier<LeaderElectionRegistry> registry;

	private final Supplier<String> defaultGroup;

	private final Supplier<Duration> shutdownTimeout;

	private final Map<MethodClassKey, Gate> gates = new ConcurrentHashMap<>();

	/**
	 * The gate of each method for the one plain class it was first called on, found
	 * without allocating a key: the hot path. Other classes (and proxies as targets) go
	 * through {@link #gates}.
	 */
	private final Map<Method, Gate> gatesByMethod = new ConcurrentHashMap<>();

	private final RunningCalls<LeaderOnlyRun> running = new RunningCalls<>();

	private volatile long shutdownDeadline;

	private volatile boolean shuttingDown;

	/** How many revocations this interceptor has received; only ever grows. */
	private final AtomicLong revocations = new AtomicLong();

	/**
	 * Creates an interceptor. The suppliers are called on first use, not here, so that
	 * the interceptor can be created before the registry.
	 * @param registry the registry whose groups gate the calls
	 * @param defaultGroup the group of annotations that name none
	 * @param shutdownTimeout how long a shutdown waits for running calls
	 */
	public OnlyOnLeaderInterceptor(Supplier<LeaderElectionRegistry> registry, Supplier<String> defaultGroup,
			Supplier<Duration> shutdownTimeout) {
		this.registry = Objects.requireNonNull(registry, "registry");
		this.defaultGroup = Objects.requireNonNull(defaultGroup, "defaultGroup");
		this.shutdownTimeout = Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Method method = invocation.getMethod();
		Object target = invocation.getThis();
		Gate gate = this.gatesByMethod.get(method);
		if (gate == null || target == null || gate.targetClass != target.getClass()) {
			gate = gate(method, target);
		}
		if (gate.group == null) {
			return invocation.proceed();
		}
		LeaderElection election = gate.election(this.registry);
		if (gate.reactive != null) {
			Gate reactive = gate;
			return gate.reactive.defer(() -> startRun(invocation, reactive, election));
		}
		long revocationsBefore = this.revocations.get();
		Leadership leadership = election.leadership().orElse(null);
		if (leadership == null) {
			return skip(method, election);
		}
		JobTick tick = gate.scheduled ? ScheduledTicks.take(method) : null;
		BlockingCall call = new BlockingCall(Thread.currentThread(), leadership, gate.interruptOnRevoke);
		int token = this.running.add(call);
		try {
			// A revocation of this term must either see this call in running or make it
			// skip. Its listener call counts itself in revocations, then reads running;
			// this thread added the call to running, then reads revocations. All four
			// accesses are volatile, so they are totally ordered, and one of these holds:
			// - revoked() read running after the add: it sees the call (to interrupt or
			// wait for it);
			// - it read running before the add: then it counted itself before this
			// second read, which finds the count changed, and isValid() below runs after
			// the revocation was delivered, when (listener contract) the term is over:
			// the call is skipped;
			// - it counted itself before the first read: the term was already over when
			// leadership() ran, which then did not answer this term.
			// A deadline that passes between leadership() and here, with no revocation
			// delivered yet, is as if it passed just after the call started: the
			// revocation that follows sees the call. So the deadline is checked once (one
			// nanoTime), and again only when a revocation, of any group, came in between.
			if (this.revocations.get() != revocationsBefore && !leadership.isValid()) {
				return skip(method, election);
			}
			// Claimed while the call counts as running: a shutdown waits for the claim
			// and for the record of the run's end, both written before the lease is
			// released.
			RunRecord run = (tick != null) ? tick.claim() : null;
			if (tick != null && run == null) {
				return skippedResult(method.getReturnType());
			}
			Object result;
			try (LeadershipContext.Scope scope = LeadershipContext.open(leadership)) {
				result = invocation.proceed();
			}
			catch (Throwable ex) {
				if (tick != null && run != null) {
					tick.finish(run, (call.wasInterrupted() || ex instanceof InterruptedException)
							? RunOutcome.CANCELLED : RunOutcome.FAILED);
				}
				throw ex;
			}
			if (result instanceof CompletionStage<?> stage) {
				// Tracked before the call stops being: a shutdown that finds neither
				// has nothing to wait for.
				trackUntilCompleted(stage, leadership, gate.interruptOnRevoke, method, revocationsBefore,
						recorder(tick, run));
			}
			else if (tick != null && run != null) {
				tick.finish(run, call.wasInterrupted() ? RunOutcome.CANCELLED : RunOutcome.SUCCEEDED);
			}
			return result;
		}
		finally {
			this.running.remove(token, call);
			call.finish();
		}
	}

	private void trackUntilCompleted(CompletionStage<?> stage, Leadership leadership, boolean interruptOnRevoke,
			Method method, long revocationsBefore, Consumer<RunOutcome> recorder) {
		PendingResult pending = new PendingResult(leadership, interruptOnRevoke, stage,
				method.getDeclaringClass().getSimpleName() + "." + method.getName() + "()");
		int token = this.running.add(pending);
		pending.whenCompleted((outcome) -> {
			this.running.remove(token, pending);
			recorder.accept(outcome);
		});
		// A revocation that read running before the add did not see it: as in invoke().
		if (interruptOnRevoke && this.revocations.get() != revocationsBefore && !leadership.isValid()) {
			pending.interrupt();
		}
	}

	/**
	 * Starts a subscription to a reactive method's work if this instance leads its group
	 * now; the same ordering with revocations as for a call (see {@link #invoke}).
	 */
	private @Nullable ReactiveRun startRun(MethodInvocation invocation, Gate gate, LeaderElection election) {
		Method method = invocation.getMethod();
		long revocationsBefore = this.revocations.get();
		Leadership leadership = election.leadership().orElse(null);
		if (leadership == null) {
			skip(method, election);
			return null;
		}
		JobTick tick = gate.scheduled ? ScheduledTicks.take(method) : null;
		ProxyMethodInvocation template = (ProxyMethodInvocation) invocation;
		ReactiveRun run = new ReactiveRun(leadership, gate.interruptOnRevoke, () -> {
			// The original invocation never proceeds: each subscription proceeds a
			// clone of it through the rest of the advice chain.
			try (LeadershipContext.Scope scope = LeadershipContext.open(leadership)) {
				return template.invocableClone().proceed();
			}
		}, method.getDeclaringClass().getSimpleName() + "." + method.getName() + "()");
		int token = this.running.add(run);
		if (this.revocations.get() != revocationsBefore && !leadership.isValid()) {
			run.onEnd((outcome) -> this.running.remove(token, run));
			run.end(RunOutcome.CANCELLED);
			skip(method, election);
			return null;
		}
		RunRecord claimed = (tick != null) ? tick.claim() : null;
		if (tick != null && claimed == null) {
			run.onEnd((outcome) -> this.running.remove(token, run));
			run.end(RunOutcome.CANCELLED);
			return null;
		}
		Consumer<RunOutcome> recorder = recorder(tick, claimed);
		run.onEnd((outcome) -> {
			this.running.remove(token, run);
			recorder.accept(outcome);
		});
		return run;
	}

	/** Records how a claimed run ended; does nothing for a run that claimed no tick. */
	private static Consumer<RunOutcome> recorder(@Nullable JobTick tick, @Nullable RunRecord run) {
		if (tick == null || run == null) {
			return (outcome) -> {
			};
		}
		return (outcome) -> tick.finish(run, outcome);
	}

	private Gate gate(Method method, @Nullable Object target) {
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : null;
		Gate gate = this.gates.computeIfAbsent(new MethodClassKey(method, targetClass),
				(key) -> newGate(method, targetClass));
		// A target whose class is its target class whatever its state (no proxy, no
		// TargetClassAware) is recognised by its class alone: the hot path compares
		// classes.
		if (target != null && targetClass == target.getClass() && !(target instanceof TargetClassAware)) {
			this.gatesByMethod.putIfAbsent(method, gate);
		}
		return gate;
	}

	private Gate newGate(Method method, @Nullable Class<?> targetClass) {
		OnlyOnLeader annotation = OnlyOnLeaderPointcut.find(method, targetClass);
		if (annotation == null) {
			return new Gate(targetClass, null, false, null, false);
		}
		String group = annotation.group().isEmpty() ? this.defaultGroup.get() : annotation.group();
		return new Gate(targetClass, group, annotation.interruptOnRevoke(),
				REACTOR_PRESENT ? reactiveGate(method) : null, OnlyOnLeaderPointcut.isScheduled(method, targetClass));
	}

	private static @Nullable ReactiveGate reactiveGate(Method method) {
		if (COROUTINES_REACTOR_PRESENT && KotlinDetector.isSuspendingFunction(method)) {
			return ReactiveGate.forSuspendingFunction(method);
		}
		return ReactiveGate.forReturnType(method.getReturnType());
	}

	private @Nullable Object skip(Method method, LeaderElection election) {
		if (logger.isDebugEnabled()) {
			logger.debug("Skipped {}.{}(): candidate '{}' does not lead group '{}'",
					method.getDeclaringClass().getSimpleName(), method.getName(), election.candidateId(),
					election.group());
		}
		return skippedResult(method.getReturnType());
	}

	/**
	 * What a skipped call returns: an empty optional, a primitive's default, otherwise
	 * null.
	 */
	static @Nullable Object skippedResult(Class<?> returnType) {
		if (returnType == Optional.class) {
			return Optional.empty();
		}
		if (returnType == OptionalInt.class) {
			return OptionalInt.empty();
		}
		if (returnType == OptionalLong.class) {
			return OptionalLong.empty();
		}
		if (returnType == OptionalDouble.class) {
			return OptionalDouble.empty();
		}
		if (returnType.isPrimitive() && returnType != void.class) {
			return Array.get(Array.newInstance(returnType, 1), 0);
		}
		return null;
	}

	@Override
	public void revoked(Leadership leadership, RevocationReason reason) {
		// Before reading running: see invoke().
		this.revocations.incrementAndGet();
		this.running.forEach((call) -> {
			if (call.interruptOnRevoke() && call.leadership().equals(leadership)) {
				call.interrupt();
			}
		});
		if (reason == RevocationReason.SHUTDOWN) {
			awaitCalls(leadership.group());
		}
	}

	private void awaitCalls(String group) {
		if (!this.shuttingDown) {
			this.shutdownDeadline = System.nanoTime() + this.shutdownTimeout.get().toNanos();
			this.shuttingDown = true;
		}
		// Again until none is left: a call that returns a stage hands its work on to a
		// run that the first look may not have seen. No new call starts: the group's
		// leadership is over.
		for (List<LeaderOnlyRun> calls = runsOf(group); !calls.isEmpty(); calls = runsOf(group)) {
			for (LeaderOnlyRun call : calls) {
				if (!call.await(this.shutdownDeadline)) {
					logger.warn("A leader-only method of group '{}' was still running {} when the shutdown "
							+ "timeout passed; stopping without waiting for it", group, call.where());
					return;
				}
			}
		}
	}

	private List<LeaderOnlyRun> runsOf(String group) {
		List<LeaderOnlyRun> runs = new ArrayList<>();
		this.running.forEach((run) -> {
			if (run.leadership().group().equals(group)) {
				runs.add(run);
			}
		});
		return runs;
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	public String toString() {
		return "OnlyOnLeaderInterceptor";
	}

	/**
	 * What applies to one method of one class: its group (none if the method is not
	 * gated), resolved to an election on first use.
	 */
	private static final class Gate {

		final @Nullable Class<?> targetClass;

		final @Nullable String group;

		final boolean interruptOnRevoke;

		/**
		 * How a reactive method is gated at each subscription; null for other methods.
		 */
		final @Nullable ReactiveGate reactive;

		/**
		 * Whether the method is {@code @Scheduled}: only then may the scheduler have
		 * fired a tick for it to claim.
		 */
		final boolean scheduled;

		private volatile @Nullable LeaderElection election;

		Gate(@Nullable Class<?> targetClass, @Nullable String group, boolean interruptOnRevoke,
				@Nullable ReactiveGate reactive, boolean scheduled) {
			this.targetClass = targetClass;
			this.group = group;
			this.interruptOnRevoke = interruptOnRevoke;
			this.reactive = reactive;
			this.scheduled = scheduled;
		}

		LeaderElection election(Supplier<LeaderElectionRegistry> registry) {
			LeaderElection current = this.election;
			if (current == null) {
				String name = Objects.requireNonNull(this.group, "group");
				LeaderElectionRegistry elections = registry.get();
				// Groups named in annotations are joined at startup; this covers beans
				// created later.
				current = elections.find(name).orElseGet(() -> elections.join(name));
				this.election = current;
			}
			return current;
		}

	}

}
