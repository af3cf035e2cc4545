package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import org.jspecify.annotations.Nullable;

/**
 * An {@link ElectionScheduler} for tests, on which time stands still until the test moves
 * it. {@link #advance(Duration)} runs every task that falls due in order, on the calling
 * thread, each at its own instant; {@link #pause(Duration)} moves the clock without
 * running anything, as a process that was stopped sees it. Store calls then take no time,
 * so a test of an election over leases of seconds runs in milliseconds and sees the same
 * sequence every time.
 *
 * <pre class="code">
 * VirtualElectionScheduler time = new VirtualElectionScheduler();
 * InMemoryLeaseStore store = new InMemoryLeaseStore(time::nanoTime);
 * LeaderElectionEngine engine = LeaderElectionEngine.builder(store).scheduler(time).build();
 * LeaderElection orders = engine.join("orders");
 * engine.start();
 * time.advance(Duration.ofMillis(100));
 * assertThat(orders.isLeader()).isTrue();
 * </pre>
 *
 * Give the store the same clock, or leases expire in real time while the election runs in
 * virtual time. Listeners are still called on the engine's event threads, shortly after
 * the change: await them. A store call that blocks blocks the test. A store call that is
 * to take time instead advances the clock itself, from within the call: the tasks that
 * fall due meanwhile run then, nested in the call, as they would run on the engine's
 * other threads while the call waits for its answer (a deadline check, say, that ends a
 * belief while a renewal hangs). Thread-safe: any thread may schedule, one advances at a
 * time.
 */
public final class VirtualElectionScheduler implements ElectionScheduler {

	/** More tasks than this within one advance means an election that never settles. */
	private static final int MAX_TASKS_PER_ADVANCE = 1_000_000;

	private final Object monitor = new Object();

	private final Object advancing = new Object();

	private final PriorityQueue<Task> tasks = new PriorityQueue<>();

	private final AtomicLong sequence = new AtomicLong();

	private final int maxTasksPerAdvance;

	/**
	 * Written under {@link #monitor}; read without it, as every belief's check reads it
	 * and a test reads those after every step.
	 */
	private volatile long now;

	/** Starts at an arbitrary instant, as {@link System#nanoTime()} does. */
	public VirtualElectionScheduler() {
		this(1_000_000_000_000L);
	}

	/** Starts at the given instant, in nanoseconds. */
	public VirtualElectionScheduler(long startNanos) {
		this(startNanos, MAX_TASKS_PER_ADVANCE);
	}

	/**
	 * Starts at the given instant, and gives up on an advance after the given number of
	 * tasks: a test of that limit need not run a million tasks.
	 */
	VirtualElectionScheduler(long startNanos, int maxTasksPerAdvance) {
		this.now = startNanos;
		this.maxTasksPerAdvance = maxTasksPerAdvance;
	}

	@Override
	public long nanoTime() {
		return this.now;
	}

	@Override
	public FutureTask<?> schedule(Runnable task, long delayNanos) {
		Objects.requireNonNull(task, "task");
		synchronized (this.monitor) {
			Task scheduled = new Task(task, this.now + Math.max(0, delayNanos), this.sequence.incrementAndGet());
			this.tasks.add(scheduled);
			return scheduled;
		}
	}

	@Override
	public void execute(Runnable task) {
		schedule(task, 0);
	}

	/**
	 * Moves the clock forward by the given time, running every task due by then, in the
	 * order they fall due (and, at one instant, in the order they were scheduled),
	 * including those that the tasks schedule.
	 * @throws IllegalStateException if the tasks keep scheduling each other without time
	 * passing
	 */
	public void advance(Duration duration) {
		requireNotNegative(duration);
		synchronized (this.advancing) {
			long target;
			synchronized (this.monitor) {
				target = this.now + duration.toNanos();
			}
			for (int ran = 0;; ran++) {
				Task next = nextDue(target);
				if (next == null) {
					break;
				}
				if (ran == this.maxTasksPerAdvance) {
					throw new IllegalStateException("More than " + this.maxTasksPerAdvance
							+ " tasks ran within one advance: something reschedules itself without delay");
				}
				next.run();
				next.rethrowFailure();
			}
			synchronized (this.monitor) {
				this.now = Math.max(this.now, target);
			}
		}
	}

	/**
	 * Moves the clock forward a step at a time, running what falls due, until the
	 * condition holds; checks it before the first step too.
	 * @param step how far each step moves the clock
	 * @param atMost how much virtual time may pass before giving up
	 * @throws AssertionError if the condition still does not hold after {@code atMost}
	 */
	public void advanceUntil(BooleanSupplier condition, Duration step, Duration atMost) {
		requireNotNegative(atMost);
		if (step.isZero() || step.isNegative()) {
			throw new IllegalArgumentException("A step must move the clock, not by " + step);
		}
		long limit = nanoTime() + atMost.toNanos();
		runDueTasks();
		while (!condition.getAsBoolean()) {
			if (nanoTime() - limit >= 0) {
				throw new AssertionError("Not true within " + atMost + " of virtual time");
			}
			advance(step);
		}
	}

	/** Runs the tasks that are due now, without moving the clock. */
	public void runDueTasks() {
		advance(Duration.ZERO);
	}

	/**
	 * Moves the clock forward without running anything, as a process that was stopped (a
	 * long garbage collection, {@code SIGSTOP}) finds it when it wakes up. The tasks that
	 * fell due meanwhile run at the next {@link #advance}, late, as they would.
	 */
	public void pause(Duration duration) {
		requireNotNegative(duration);
		synchronized (this.monitor) {
			this.now += duration.toNanos();
		}
	}

	/** How many tasks wait, due or not; cancelled ones are not counted. */
	public int pendingTasks() {
		synchronized (this.monitor) {
			return (int) this.tasks.stream().filter((task) -> !task.isCancelled()).count();
		}
	}

	private @Nullable Task nextDue(long target) {
		synchronized (this.monitor) {
			while (!this.tasks.isEmpty()) {
				Task head = this.tasks.peek();
				if (head.isCancelled()) {
					this.tasks.poll();
					continue;
				}
				if (head.due - target > 0) {
					return null;
				}
				this.tasks.poll();
				this.now = Math.max(this.now, head.due);
				return head;
			}
			return null;
		}
	}

	private static void requireNotNegative(Duration duration) {
		if (duration.isNegative()) {
			throw new IllegalArgumentException("Time only moves forward, not by " + duration);
		}
	}

	private static final class Task extends FutureTask<Void> implements Comparable<Task> {

		final long due;

		final long sequence;

		Task(Runnable runnable, long due, long sequence) {
			super(runnable, null);
			this.due = due;
			this.sequence = sequence;
		}

		/**
		 * The engine's tasks handle their own failures; one that escapes is a bug, and
		 * the test should see it rather than a future nobody reads.
		 */
		void rethrowFailure() {
			if (isCancelled()) {
				return;
			}
			try {
				get();
			}
			catch (ExecutionException ex) {
				throw new IllegalStateException("A task of the election failed", ex.getCause());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

		@Override
		public int compareTo(Task other) {
			int byDue = Long.compare(this.due - other.due, 0);
			return (byDue != 0) ? byDue : Long.compare(this.sequence, other.sequence);
		}

	}

}
