package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import io.github.leaderelection.LeaderElectionListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers leadership changes to listeners on a small pool of threads of its own, never
 * on a thread that renews a lease: a slow or throwing listener never delays a renewal.
 * Each group's changes are delivered one at a time, in the order they happened; different
 * groups are delivered independently, so a listener that takes its time over one group (a
 * leader-only bean that is slow to stop) delays only that group's later changes, as long
 * as fewer groups than the pool has threads are held up at once.
 */
final class Notifier {

	private static final Logger logger = LoggerFactory.getLogger(Notifier.class);

	private final List<LeaderElectionListener> listeners = new CopyOnWriteArrayList<>();

	private final Executor executor;

	private final Map<String, GroupQueue> queues = new ConcurrentHashMap<>();

	Notifier(Executor executor) {
		this.executor = executor;
	}

	void addListener(LeaderElectionListener listener) {
		this.listeners.add(listener);
	}

	void publish(String group, String description, Consumer<LeaderElectionListener> event) {
		queue(group).add(() -> {
			for (LeaderElectionListener listener : this.listeners) {
				try {
					event.accept(listener);
				}
				catch (Throwable ex) {
					if (ex instanceof VirtualMachineError error) {
						throw error;
					}
					logger.warn("Leader election listener {} failed on {}", listener, description, ex);
				}
			}
		});
	}

	/**
	 * Waits until everything published so far has been delivered, or the timeout passed.
	 * @return whether everything was delivered
	 */
	boolean awaitDelivered(Duration timeout) {
		CompletableFuture<?>[] delivered = this.queues.values()
			.stream()
			.map(GroupQueue::delivered)
			.toArray(CompletableFuture[]::new);
		try {
			CompletableFuture.allOf(delivered).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
		catch (TimeoutException | ExecutionException ex) {
			return false;
		}
	}

	private GroupQueue queue(String group) {
		return this.queues.computeIfAbsent(group, GroupQueue::new);
	}

	/** One group's changes: delivered in order, by at most one pool thread at a time. */
	private final class GroupQueue {

		private final String group;

		private final Queue<Runnable> pending = new ArrayDeque<>();

		/** Whether a pool thread is delivering this group's changes; guarded by this. */
		private boolean delivering;

		GroupQueue(String group) {
			this.group = group;
		}

		void add(Runnable delivery) {
			synchronized (this) {
				this.pending.add(delivery);
				if (this.delivering) {
					return;
				}
				this.delivering = true;
			}
			try {
				Notifier.this.executor.execute(this::deliverAll);
			}
			catch (RejectedExecutionException ex) {
				synchronized (this) {
					this.pending.clear();
					this.delivering = false;
				}
				logger.debug("Not delivering the changes of group '{}': the election is closed", this.group);
			}
		}

		/** Completes once everything added before it has been delivered. */
		CompletableFuture<Void> delivered() {
			CompletableFuture<Void> delivered = new CompletableFuture<>();
			add(() -> delivered.complete(null));
			return delivered;
		}

		private void deliverAll() {
			boolean finished = false;
			try {
				for (Runnable next = next(); next != null; next = next()) {
					next.run();
				}
				finished = true;
			}
			finally {
				if (!finished) {
					// A VirtualMachineError left a delivery: later changes still need a
					// thread.
					boolean more;
					synchronized (this) {
						this.delivering = false;
						more = !this.pending.isEmpty();
					}
					if (more) {
						add(() -> {
						});
					}
				}
			}
		}

		private synchronized Runnable next() {
			Runnable next = this.pending.poll();
			if (next == null) {
				this.delivering = false;
			}
			return next;
		}

	}

}
