package io.github.leaderelection.spi;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * A lock per key (a candidate, a group) together with the state it guards: calls for one
 * key run one at a time, calls for different keys at once. A key's state is created on
 * its first use and never removed, only emptied by the caller, so that every call for the
 * key takes the same lock. An action may call the store: a slow call then holds up only
 * the later calls for the same key, which change what it changes and must wait for it
 * anyway.
 *
 * <pre class="code">
 * KeyedLocks&lt;Announced&gt; announced = new KeyedLocks&lt;&gt;(Announced::new);
 * long leaseId = announced.withLock(candidateId, (candidate) -&gt; candidate.leaseId);
 * </pre>
 *
 * @param <S> the state of a key, which the caller reads and changes only under its lock
 */
public final class KeyedLocks<S> {

	private final Map<String, S> states = new ConcurrentHashMap<>();

	private final Supplier<S> newState;

	/**
	 * @param newState the state of a key on its first use
	 */
	public KeyedLocks(Supplier<S> newState) {
		this.newState = Objects.requireNonNull(newState, "newState");
	}

	/**
	 * Runs the action on the key's state, creating it first if need be, holding the key's
	 * lock.
	 * @param key the key
	 * @param action what to do under the lock
	 * @param <T> the action's result
	 * @param <E> what the action may throw
	 * @return what the action returned
	 * @throws E if the action threw it
	 */
	public <T, E extends Exception> T withLock(String key, Locked<S, T, E> action) throws E {
		S state = this.states.computeIfAbsent(key, (any) -> this.newState.get());
		synchronized (state) {
			return action.run(state);
		}
	}

	/**
	 * Runs the action on the key's state, holding the key's lock, unless the key was
	 * never used: nothing was done for it, so there is nothing to undo.
	 * @param key the key
	 * @param action what to do under the lock
	 * @param <T> the action's result
	 * @param <E> what the action may throw
	 * @return what the action returned, empty if the key was never used
	 * @throws E if the action threw it
	 */
	public <T, E extends Exception> Optional<T> withLockIfUsed(String key, Locked<S, T, E> action) throws E {
		S state = this.states.get(key);
		if (state == null) {
			return Optional.empty();
		}
		synchronized (state) {
			return Optional.of(action.run(state));
		}
	}

	/**
	 * An action on a key's state, under its lock.
	 *
	 * @param <S> the state of a key
	 * @param <T> the action's result
	 * @param <E> what the action may throw
	 */
	@FunctionalInterface
	public interface Locked<S, T, E extends Exception> {

		/**
		 * Runs the action.
		 * @param state the key's state
		 * @return the result
		 * @throws E if the action fails
		 */
		T run(S state) throws E;

	}

}
