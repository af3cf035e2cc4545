package io.github.leaderelection.actuate;

import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks the store for the participants of groups for the endpoint, all groups at once and
 * for one time budget in total, so that a store that hangs holds up a read for that
 * budget, not for a store timeout per group one after another. A group whose store did
 * not answer in time is shown with the participants last read, marked as such; a lookup
 * still on its way is not started again, so a hung store holds at most one thread per
 * group.
 */
final class ParticipantsLookup implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(ParticipantsLookup.class);

	private final LeaderElectionParticipants participants;

	private final ExecutorService executor;

	private final Map<String, CompletableFuture<@Nullable List<String>>> inFlight = new ConcurrentHashMap<>();

	/** The participants last read per group, absent when none were. */
	private final Map<String, List<String>> lastKnown = new ConcurrentHashMap<>();

	ParticipantsLookup(LeaderElectionParticipants participants) {
		this.participants = participants;
		AtomicInteger threads = new AtomicInteger();
		this.executor = Executors.newCachedThreadPool((task) -> {
			Thread thread = new Thread(task, "leader-election-endpoint-" + threads.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		});
	}

	/**
	 * The participants of each group, each read within the budget or last known.
	 * @param groups the groups
	 * @param budget how long to wait for the store in total
	 * @return per group what the store said, in the order given
	 */
	Map<String, Result> lookUp(Collection<String> groups, Duration budget) {
		Map<String, CompletableFuture<@Nullable List<String>>> calls = new LinkedHashMap<>();
		for (String group : groups) {
			calls.put(group, call(group));
		}
		long deadline = System.nanoTime() + budget.toNanos();
		Map<String, Result> results = new LinkedHashMap<>();
		calls.forEach((group, call) -> results.put(group, await(group, call, deadline)));
		return results;
	}

	/** The lookup of the group still on its way, or a new one. */
	private CompletableFuture<@Nullable List<String>> call(String group) {
		while (true) {
			CompletableFuture<@Nullable List<String>> current = this.inFlight.get(group);
			if (current != null && !current.isDone()) {
				return current;
			}
			CompletableFuture<@Nullable List<String>> next = new CompletableFuture<>();
			boolean claimed = (current != null) ? this.inFlight.replace(group, current, next)
					: this.inFlight.putIfAbsent(group, next) == null;
			if (claimed) {
				this.executor.execute(() -> {
					try {
						List<String> ids = this.participants.participants(group).map(List::copyOf).orElse(null);
						if (ids != null) {
							this.lastKnown.put(group, ids);
						}
						next.complete(ids);
					}
					catch (Throwable ex) {
						next.completeExceptionally(ex);
					}
				});
				return next;
			}
		}
	}

	private Result await(String group, CompletableFuture<@Nullable List<String>> call, long deadline) {
		try {
			return new Result(call.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS), true);
		}
		catch (TimeoutException ex) {
			return new Result(this.lastKnown.get(group), false);
		}
		catch (ExecutionException ex) {
			// The store cannot tell now: show the group without them, and let a forced
			// leader be judged by the store itself.
			logger.debug("Could not list the participants of group {}", RequestValues.escape(group), ex.getCause());
			return new Result(null, true);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return new Result(this.lastKnown.get(group), false);
		}
	}

	@Override
	public void close() {
		this.executor.shutdownNow();
	}

	/**
	 * What the store said of a group's participants.
	 *
	 * @param ids the participants, or null when unknown
	 * @param answered whether the store answered within the budget; if not, the ids are
	 * those last read
	 */
	record Result(@Nullable List<String> ids, boolean answered) {

	}

}
