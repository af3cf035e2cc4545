package io.github.leaderelection.aop;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.github.leaderelection.Leadership;
import org.jspecify.annotations.Nullable;

/**
 * One running call of a leader-only method that returns when its work is done. Its state
 * moves without a lock: the calling thread takes it from {@code RUNNING} to {@code DONE},
 * a revocation from {@code RUNNING} to {@code INTERRUPTING} (then interrupts the thread)
 * to {@code INTERRUPTED}, so that a call is interrupted only while it runs and its thread
 * never leaves with that interrupt.
 */
final class BlockingCall implements LeaderOnlyRun {

	private static final int RUNNING = 0;

	private static final int INTERRUPTING = 1;

	private static final int INTERRUPTED = 2;

	private static final int DONE = 3;

	/**
	 * The longest a waiter parks before it looks again: a bound should a wake-up be
	 * missed.
	 */
	private static final long MAX_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

	private static final VarHandle STATE;

	static {
		try {
			STATE = MethodHandles.lookup().findVarHandle(BlockingCall.class, "state", int.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final Thread thread;

	private final Leadership leadership;

	private final boolean interruptOnRevoke;

	private volatile int state = RUNNING;

	private volatile @Nullable Thread waiter;

	BlockingCall(Thread thread, Leadership leadership, boolean interruptOnRevoke) {
		this.thread = thread;
		this.leadership = leadership;
		this.interruptOnRevoke = interruptOnRevoke;
	}

	@Override
	public Leadership leadership() {
		return this.leadership;
	}

	@Override
	public boolean interruptOnRevoke() {
		return this.interruptOnRevoke;
	}

	@Override
	public String where() {
		return "on thread '" + this.thread.getName() + "'";
	}

	/** Interrupts the call's thread, unless the call has already returned. */
	@Override
	public void interrupt() {
		if (STATE.compareAndSet(this, RUNNING, INTERRUPTING)) {
			this.thread.interrupt();
			this.state = INTERRUPTED;
		}
	}

	/** Whether a revocation interrupted the call. */
	boolean wasInterrupted() {
		int current = this.state;
		return current == INTERRUPTING || current == INTERRUPTED;
	}

	/** Called on the call's own thread when it returns. */
	void finish() {
		if (!STATE.compareAndSet(this, RUNNING, DONE)) {
			while (this.state == INTERRUPTING) {
				Thread.onSpinWait();
			}
			// Ours, not the caller's: a pooled thread must not carry it into its next
			// task.
			Thread.interrupted();
			this.state = DONE;
		}
		// The state was written before the waiter is read, and a waiter writes itself
		// before it reads the state (all volatile): one of the two sees the other, no
		// wake-up is lost.
		Thread current = this.waiter;
		if (current != null) {
			LockSupport.unpark(current);
		}
	}

	/**
	 * Waits until the call has returned or {@code deadline} (on the nanoTime clock) has
	 * passed.
	 */
	@Override
	public boolean await(long deadline) {
		this.waiter = Thread.currentThread();
		while (this.state != DONE) {
			long remaining = deadline - System.nanoTime();
			if (remaining <= 0) {
				return false;
			}
			LockSupport.parkNanos(this, Math.min(remaining, MAX_PARK_NANOS));
			if (Thread.currentThread().isInterrupted()) {
				return false;
			}
		}
		return true;
	}

}
