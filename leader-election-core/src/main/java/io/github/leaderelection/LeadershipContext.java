package io.github.leaderelection;

import java.util.Objects;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * The leadership that the code running on the current thread acts under, set while a
 * method annotated with {@link OnlyOnLeader} runs, so that code deep inside it can fence
 * its writes with the {@link Leadership#term() term}.
 *
 * <pre class="code">
 * &#64;OnlyOnLeader
 * &#64;Scheduled(fixedDelay = 5000)
 * void dispatch() {
 *     long term = LeadershipContext.current().orElseThrow().term();
 *     jdbc.update("UPDATE job SET state = 'DISPATCHED', term = ? WHERE id = ? AND term &lt;= ?", term, id, term);
 * }
 * </pre>
 */
public final class LeadershipContext {

	private static final ThreadLocal<@Nullable Leadership> current = new ThreadLocal<>();

	private LeadershipContext() {
	}

	/**
	 * The leadership the current thread acts under, if it runs inside a leader-only
	 * method. It may have ended since the method started: ask
	 * {@link Leadership#isValid()}. With {@code leader-election.enabled=false} a
	 * leader-only method runs under a leadership of term 0 that stays valid.
	 */
	public static Optional<Leadership> current() {
		return Optional.ofNullable(current.get());
	}

	/**
	 * Makes the given leadership current on this thread until the returned scope is
	 * closed (on the same thread), which restores the previous one. For code that gates
	 * work by hand with {@link LeaderElection#leadership()}; {@link OnlyOnLeader} methods
	 * get it without this.
	 */
	public static Scope open(Leadership leadership) {
		Objects.requireNonNull(leadership, "leadership");
		Leadership previous = current.get();
		current.set(leadership);
		// Restored with set(null) rather than remove(): a thread that runs leader-only
		// methods keeps its entry, instead of allocating a new (weakly referenced) one on
		// every call.
		return () -> current.set(previous);
	}

	/**
	 * A leadership made current by {@link #open(Leadership)}.
	 */
	@FunctionalInterface
	public interface Scope extends AutoCloseable {

		/** Restores the leadership that was current before. */
		@Override
		void close();

	}

}
