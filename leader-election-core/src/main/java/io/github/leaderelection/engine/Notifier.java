package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import io.github.leaderelection.LeaderElectionListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers leadership changes to listeners on one thread of its own, in order, so that a
 * slow or throwing listener never delays a renewal.
 */
final class Notifier {

	private static final Logger logger = LoggerFactory.getLogger(Notifier.class);

	private final List<LeaderElectionListener> listeners = new CopyOnWriteArrayList<>();

	private final ExecutorService executor;

	Notifier(ExecutorService executor) {
		this.executor = executor;
	}

	void addListener(LeaderElectionListener listener) {
		this.listeners.add(listener);
	}

	void publish(String description, Consumer<LeaderElectionListener> event) {
		try {
			this.executor.execute(() -> {
				for (LeaderElectionListener listener : this.listeners) {
					try {
						event.accept(listener);
					}
					catch (Throwable ex) {
						logger.warn("Leader election listener {} failed on {}", listener, description, ex);
					}
				}
			});
		}
		catch (RejectedExecutionException ex) {
			logger.debug("Not delivering {}: the election is closed", description);
		}
	}

	/**
	 * Waits until everything published so far has been delivered, or the timeout passed.
	 * @return whether everything was delivered
	 */
	boolean awaitDelivered(Duration timeout) {
		try {
			CompletableFuture.runAsync(() -> {
			}, this.executor).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
		catch (TimeoutException | RuntimeException | java.util.concurrent.ExecutionException ex) {
			return false;
		}
	}

}
