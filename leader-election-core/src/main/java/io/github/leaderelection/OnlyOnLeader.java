package io.github.leaderelection;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a method only while this instance leads a group; elsewhere the call is skipped.
 *
 * <p>
 * A skipped call returns {@code null}, {@link java.util.Optional#empty()} (or an empty
 * {@code OptionalInt}, {@code OptionalLong}, {@code OptionalDouble}) or the default of a
 * primitive return type ({@code 0}, {@code false}). The check costs no I/O and takes no
 * lock, so the annotation suits {@code @Scheduled} jobs that fire on every instance,
 * {@code @Async} methods (the check then runs on the executor's thread) and plain bean
 * methods alike. On a type, it applies to every public method of the bean except
 * {@code equals}, {@code hashCode}, {@code toString} and the other methods of
 * {@code Object}.
 *
 * <p>
 * While a call runs, {@link LeadershipContext#current()} gives the {@link Leadership} it
 * runs under: pass its {@link Leadership#term() term} to writes that must be fenced. With
 * {@code leader-election.enabled=false} every call runs, under a leadership of term 0. On
 * shutdown, this instance waits (for at most {@code leader-election.shutdown-timeout})
 * until running calls have returned before it releases the lease, so a follower never
 * takes over while they still run.
 *
 * <p>
 * NOTE: the annotation works through a Spring proxy, like {@code @Transactional}: a call
 * from one method of a bean to another method of the same bean does not pass the proxy
 * and is not checked. Move the leader-only method to another bean, call it through the
 * proxy (inject the bean into itself with {@code @Lazy}), or ask
 * {@link LeaderElection#isLeader()} in the code. A method that no proxy can intercept (a
 * private or static one, or, with class-based proxies, a final one or one of a final
 * class) fails startup with a message that names it.
 *
 * <p>
 * A method that returns a {@code Mono}, a {@code Flux} or another deferred reactive type
 * (with Reactor on the class path) is checked when its work runs instead: the call
 * returns at once, and each subscription to what it returned asks again, then calls the
 * method and subscribes to its publisher; on a follower the subscriber completes empty
 * and the method is not called. A reactive {@code @Scheduled} method, whose publisher
 * Spring obtains once at startup, so runs at each trigger on whichever instance leads
 * then. Its work is tracked until it ends, as a blocking call is until it returns:
 * shutdown waits for it, and {@link #interruptOnRevoke()} cancels it (its subscriber then
 * completes). The work finds its {@link Leadership} in its Reactor context, under
 * {@code Leadership.class}. A method that returns a {@code CompletionStage} is checked
 * when it is called, and its result is tracked the same way until it completes
 * ({@link #interruptOnRevoke()} cancels it if it is a {@code Future}).
 *
 * <p>
 * A Kotlin {@code suspend} method is a reactive one too when
 * {@code kotlinx-coroutines-reactor} is on the class path: Spring then calls it through
 * the proxy as a {@code Mono} (a {@code Flux} for a {@code Flow}) that the proxy awaits.
 * It is checked when its coroutine starts, is not called on a follower (it returns
 * {@code null}), and is tracked until the coroutine completes, across suspensions;
 * {@link #interruptOnRevoke()} cancels the coroutine. {@link LeadershipContext} is bound
 * to a thread, which a coroutine leaves: the coroutine finds its {@link Leadership} in
 * its {@code ReactorContext} instead. Without that library, a {@code suspend} method is
 * checked at each call, and its work after its first suspension is not tracked.
 *
 * <p>
 * A {@code @Scheduled} method runs each of its ticks at most once across the instances:
 * before a run, the leader claims the tick in the election's store, fenced by its term,
 * and a tick already claimed is not run again, whichever instance's clock fired it. A
 * {@code cron} or {@code fixedRate} tick that passed while no instance led is run once by
 * the next leader when it takes over ({@link #missedTicks()}). The runs are recorded
 * under the name {@code <bean name>.<method name>} in the method's group.
 *
 * <p>
 * IMPORTANT: the check happens when the call starts. A call that outlives its leadership
 * (a long job, a process pause) keeps running unless {@link #interruptOnRevoke()} is set
 * and the method reacts to interruption; long jobs should ask
 * {@link Leadership#isValid()} as they go.
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface OnlyOnLeader {

	/**
	 * Group whose leader runs the method; empty for the application's group
	 * ({@code leader-election.group}). A group named here is joined at startup.
	 */
	String group() default "";

	/**
	 * Whether to interrupt the thread running the method (or cancel the work of a
	 * reactive or Kotlin {@code suspend} method) when this instance stops leading the
	 * group while the method runs.
	 */
	boolean interruptOnRevoke() default false;

	/**
	 * What the next leader does with the ticks of a {@code @Scheduled(cron = ...)} or
	 * {@code fixedRate} method that passed while no instance led the group; by default
	 * {@code leader-election.jobs.missed-ticks}, which runs the method once for all of
	 * them. A {@code fixedDelay} method has no ticks to miss:
	 * {@link MissedTickPolicy#RUN_ONCE} on one fails startup.
	 */
	MissedTickPolicy missedTicks() default MissedTickPolicy.DEFAULT;

	/**
	 * How old the newest missed tick may be for the next leader to run it, as a duration
	 * ({@code "30m"}, {@code "PT30M"}); empty for
	 * {@code leader-election.jobs.missed-tick-max-age}.
	 */
	String missedTickMaxAge() default "";

	/**
	 * What the next leader does with the ticks of a scheduled method that passed while no
	 * instance led the group.
	 */
	enum MissedTickPolicy {

		/** As {@code leader-election.jobs.missed-ticks} says. */
		DEFAULT,

		/**
		 * Run the method once, for all the ticks missed, as a Quartz cron trigger's "fire
		 * once now".
		 */
		RUN_ONCE,

		/** Skip them: the method runs at its next tick. */
		SKIP

	}

}
