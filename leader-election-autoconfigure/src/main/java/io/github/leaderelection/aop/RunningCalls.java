package io.github.leaderelection.aop;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;

/**
 * The calls that run now, cheap to add and remove on the calling thread and read rarely
 * by another one: a small array of slots (one compare-and-set to take a free one, a
 * release store to free it), and a concurrent set for the calls that find no free slot.
 *
 * <p>
 * Every access to a slot is volatile (or stronger), so an {@link #add} that precedes a
 * {@link #forEach} in the synchronization order is seen by it: the interceptor relies on
 * it.
 *
 * @param <T> the type of call
 */
final class RunningCalls<T> {

	/**
	 * Slots used per cache line's worth of references, so that two threads rarely share a
	 * line.
	 */
	private static final int SPACING = 16;

	/** How many slots a call tries before it goes to the overflow set. */
	private static final int PROBES = 4;

	private final int mask;

	private final AtomicReferenceArray<T> slots;

	private final Set<T> overflow = ConcurrentHashMap.newKeySet();

	RunningCalls() {
		this(Math.max(16, Integer.highestOneBit(Runtime.getRuntime().availableProcessors() * 4 - 1) << 1));
	}

	RunningCalls(int slots) {
		if (Integer.bitCount(slots) != 1) {
			throw new IllegalArgumentException("slots must be a power of two: " + slots);
		}
		this.mask = slots - 1;
		this.slots = new AtomicReferenceArray<>(slots * SPACING);
	}

	/**
	 * Adds a call of the current thread.
	 * @return what to pass to {@link #remove}
	 */
	int add(T call) {
		int start = mix(System.identityHashCode(Thread.currentThread()));
		for (int i = 0; i < PROBES; i++) {
			int index = ((start + i) & this.mask) * SPACING;
			if (this.slots.get(index) == null && this.slots.compareAndSet(index, null, call)) {
				return index;
			}
		}
		this.overflow.add(call);
		return -1;
	}

	/** Removes a call that {@link #add} returned {@code token} for. */
	void remove(int token, T call) {
		if (token >= 0) {
			// Release suffices: the call has returned, and a reader that still sees it
			// may interrupt it (the interceptor clears that) or wait for it (which ends
			// when the interceptor finishes it).
			this.slots.setRelease(token, null);
		}
		else {
			this.overflow.remove(call);
		}
	}

	void forEach(Consumer<? super T> action) {
		for (int index = 0; index < this.slots.length(); index += SPACING) {
			T call = this.slots.get(index);
			if (call != null) {
				action.accept(call);
			}
		}
		this.overflow.forEach(action);
	}

	private static int mix(int hash) {
		return hash ^ (hash >>> 16);
	}

}
