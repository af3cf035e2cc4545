package io.github.leaderelection.engine;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.spi.BatchCutShortException;
import io.github.leaderelection.spi.BatchLeaseStore;
import io.github.leaderelection.spi.Batches;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's regular store requests, for all its groups at once: once per retry period,
 * one {@link BatchLeaseStore#renewAll renewal} of every lease the node leads and one
 * {@link BatchLeaseStore#readAll read} of every group it follows, so that a node with ten
 * thousand groups makes two requests per period, not ten thousand.
 *
 * <p>
 * A round only carries requests: it asks each elector what it has to renew or read and
 * hands each its own outcome, and the elector decides what that means for its belief. A
 * belief extended by a round lasts the renew deadline from the instant the round was
 * sent, as one renewed on its own would. The leases a read finds free for the taking are
 * taken at once, in one {@link BatchLeaseStore#tryAcquireAll acquisition}.
 *
 * <p>
 * Besides the regular rounds, a follower that needs a look at its lease now (it has just
 * started, or the store told it the lease changed) asks for a look soon: the groups that
 * ask meanwhile are read and taken together, so that a node starting with ten thousand
 * groups, or told of ten thousand changes, still makes a few requests. What is not
 * regular otherwise (releasing, retrying a renewal that failed, waiting out an earlier
 * holder) each elector does on its own.
 *
 * <p>
 * The rounds of one node run on a phase of its own, chosen at random when it starts, so
 * that nodes do not hit the store together. A round that is still on its way when the
 * next is due is not doubled: the next round of its kind is skipped.
 */
final class NodeRounds implements GroupSteps.Rounds {

	private static final Logger logger = LoggerFactory.getLogger(NodeRounds.class);

	private final ElectionRuntime runtime;

	/** The balancing round that runs with each regular round, or null. */
	private final @Nullable Runnable balancingRound;

	private final LeaseStore store;

	private final ElectionTiming timing;

	private final Supplier<Collection<GroupElector>> electors;

	private final AtomicBoolean renewing = new AtomicBoolean();

	private final AtomicBoolean reading = new AtomicBoolean();

	private final AtomicBoolean balancing = new AtomicBoolean();

	/** The followers that asked for a look since the last look round took them. */
	private final Set<GroupElector> toLook = ConcurrentHashMap.newKeySet();

	private final AtomicBoolean lookDue = new AtomicBoolean();

	private long nextRoundNanos;

	/**
	 * @param balancingRound the balancing round to run with each regular round, or null
	 * unless balancing
	 */
	NodeRounds(ElectionRuntime runtime, Supplier<Collection<GroupElector>> electors,
			@Nullable Runnable balancingRound) {
		this.runtime = runtime;
		this.balancingRound = balancingRound;
		this.store = runtime.store();
		this.timing = runtime.timing();
		this.electors = electors;
		runtime.afterJoins(this::lookAtThoseAsking);
	}

	/** Starts the rounds, the first within one retry period. */
	void start() {
		long period = this.timing.retryPeriod().toNanos();
		long phase = 1 + (long) (ThreadLocalRandom.current().nextDouble() * period);
		this.nextRoundNanos = this.runtime.nanoTime() + phase;
		this.runtime.schedule(this::due, phase);
	}

	private void due() {
		// At a fixed rate: a round that runs late does not push the later ones back.
		long period = this.timing.retryPeriod().toNanos();
		long now = this.runtime.nanoTime();
		do {
			this.nextRoundNanos += period;
		}
		while (this.nextRoundNanos - now <= 0);
		this.runtime.schedule(this::due, this.nextRoundNanos - now);
		// One renewal round queued or on its way at a time. Renewals run first on the
		// store threads, so a round that takes longer than a period would otherwise be
		// followed by the next at once, and with one store thread nothing else would run.
		if (this.renewing.compareAndSet(false, true)) {
			if (!this.runtime.executeRenewal(this::renewRound)) {
				this.renewing.set(false);
			}
		}
		else {
			logger.debug("Skipping a renewal round: the last one is still on its way");
		}
		this.runtime.executeStoreTask(this::readRound);
		Runnable balancer = this.balancingRound;
		if (balancer != null && this.balancing.compareAndSet(false, true)) {
			this.runtime.executeStoreTask(() -> {
				try {
					balancer.run();
				}
				finally {
					this.balancing.set(false);
				}
			});
		}
	}

	private void renewRound() {
		try {
			renewAll();
		}
		finally {
			this.renewing.set(false);
		}
	}

	private void renewAll() {
		long start = this.runtime.nanoTime();
		List<GroupSteps.RoundRenewal> renewals = new ArrayList<>();
		for (GroupElector elector : this.electors.get()) {
			GroupSteps.RoundRenewal renewal = elector.steps().renewalForRound(start);
			if (renewal != null) {
				renewals.add(renewal);
			}
		}
		if (renewals.isEmpty()) {
			return;
		}
		Map<String, Lease> renewed;
		Answered answered;
		try {
			renewed = renewBatch(renewals.stream().map(GroupSteps.RoundRenewal::lease).toList());
			answered = Answered.ALL;
		}
		catch (BatchCutShortException ex) {
			renewed = ex.leases();
			answered = new Answered(ex);
		}
		catch (Throwable ex) {
			rethrowIfFatal(ex);
			eachOnItsOwn(renewals, (renewal) -> renewal.steps().roundFailed(ex));
			return;
		}
		List<GroupSteps.RoundRenewal> refused = new ArrayList<>();
		Map<String, Lease> extended = renewed;
		Answered outcome = answered;
		eachOnItsOwn(renewals, (renewal) -> {
			String group = renewal.lease().group();
			if (extended.containsKey(group)) {
				renewal.renewed(extended.get(group));
			}
			else if (!outcome.includes(group)) {
				renewal.steps().roundFailed(outcome.failure());
			}
			else if (renewal.refused()) {
				refused.add(renewal);
			}
		});
		if (!refused.isEmpty()) {
			// Why each was refused (forced elsewhere, or lost) is in the lease as it is
			// now: one read for all of them.
			Map<String, Lease> now = readQuietly(refused.stream().map((renewal) -> renewal.lease().group()).toList());
			eachOnItsOwn(refused, (renewal) -> renewal.lostAs(now.get(renewal.lease().group())));
		}
	}

	private Map<String, Lease> readQuietly(List<String> groups) {
		try {
			return readBatch(groups);
		}
		catch (BatchCutShortException ex) {
			return ex.leases();
		}
		catch (Exception ex) {
			logger.debug("Could not read {} group(s) after losing their leases", groups.size(), ex);
			return Map.of();
		}
	}

	private void readRound() {
		if (!this.reading.compareAndSet(false, true)) {
			logger.debug("Skipping a read round: the last one is still on its way");
			return;
		}
		try {
			readAll();
		}
		finally {
			this.reading.set(false);
		}
	}

	private void readAll() {
		readAndAcquire(this.electors.get());
	}

	/**
	 * Asks for a look at a follower's lease soon: a look round runs at once unless one is
	 * already due, and takes every follower that asked until it starts.
	 */
	@Override
	public void lookSoon(GroupElector elector) {
		this.toLook.add(elector);
		if (!this.runtime.isRunningJoins()) {
			lookAtThoseAsking();
		}
	}

	/**
	 * Looks at the followers that asked, in a round of its own unless one is due; after a
	 * task of joins, at those its joins asked for.
	 */
	private void lookAtThoseAsking() {
		if (!this.toLook.isEmpty() && this.lookDue.compareAndSet(false, true)
				&& !this.runtime.executeStoreTask(this::lookRound)) {
			this.lookDue.set(false); // closing
		}
	}

	private void lookRound() {
		// Cleared first: a follower asking from now on gets a round of its own.
		this.lookDue.set(false);
		List<GroupElector> asking = new ArrayList<>(this.toLook);
		this.toLook.removeAll(asking);
		readAndAcquire(asking);
	}

	/**
	 * Reads the leases of those of the given electors that follow, then takes in one
	 * request those that their electors are to take.
	 */
	private void readAndAcquire(Collection<GroupElector> electors) {
		List<GroupElector> followers = new ArrayList<>();
		for (GroupElector elector : electors) {
			if (elector.steps().followsInRound()) {
				followers.add(elector);
			}
		}
		if (followers.isEmpty()) {
			return;
		}
		Map<String, Lease> leases;
		Answered answered;
		try {
			leases = readBatch(followers.stream().map(GroupElector::group).toList());
			answered = Answered.ALL;
		}
		catch (BatchCutShortException ex) {
			leases = ex.leases();
			answered = new Answered(ex);
		}
		catch (Throwable ex) {
			rethrowIfFatal(ex);
			eachOnItsOwn(followers, (elector) -> elector.steps().roundFailed(ex));
			return;
		}
		List<GroupElector> taking = new ArrayList<>();
		Map<String, Lease> read = leases;
		Answered outcome = answered;
		eachOnItsOwn(followers, (elector) -> {
			if (!outcome.includes(elector.group())) {
				elector.steps().roundFailed(outcome.failure());
			}
			else if (elector.steps().readInRound(read.get(elector.group()))) {
				taking.add(elector);
			}
		});
		acquireAll(taking);
	}

	private void acquireAll(List<GroupElector> candidates) {
		List<GroupElector> taking = new ArrayList<>();
		for (GroupElector elector : candidates) {
			if (elector.steps().claimForRoundAcquire()) {
				taking.add(elector);
			}
		}
		if (taking.isEmpty()) {
			return;
		}
		long start = this.runtime.nanoTime();
		Map<String, Lease> taken;
		Answered answered;
		try {
			taken = acquireBatch(taking.stream().map(GroupElector::group).toList());
			answered = Answered.ALL;
		}
		catch (BatchCutShortException ex) {
			taken = ex.leases();
			answered = new Answered(ex);
		}
		catch (Throwable ex) {
			rethrowIfFatal(ex);
			eachOnItsOwn(taking, (elector) -> elector.steps().acquireFailedInRound(ex));
			return;
		}
		long end = this.runtime.nanoTime();
		// A batch cut short by its timeout (taken group by group, the time ran out) left
		// groups untried: those look again at once, not at the next round, which a round
		// still on its way when it fell due has skipped (a free group would otherwise
		// wait two retry periods). "By its timeout" is three quarters of it on this
		// engine's clock: the store counts the timeout on its own, which may run at
		// another rate. A batch cut short by a failure leaves them to the next round, as
		// any failed call: a store in trouble is not pressed harder.
		boolean outOfTime = end - start >= this.timing.storeCallTimeout().toNanos() * 3 / 4;
		Map<String, Lease> took = taken;
		Answered outcome = answered;
		eachOnItsOwn(taking, (elector) -> {
			if (outcome.includes(elector.group())) {
				elector.steps().acquiredInRound(took.get(elector.group()), start, end);
				return;
			}
			elector.steps().acquireFailedInRound(outcome.failure());
			if (outOfTime) {
				elector.steps().requestAttempt();
			}
		});
	}

	// A batch of one group, the usual case of an application with one group, is sent as
	// the call for that group, so that its metrics and traces name the group.

	private Map<String, Lease> renewBatch(List<Lease> leases) {
		if (leases.size() == 1) {
			Lease lease = leases.get(0);
			return this.store.renew(lease, this.timing.leaseDuration(), this.timing.storeCallTimeout())
				.map((renewed) -> Map.of(lease.group(), renewed))
				.orElse(Map.of());
		}
		return Batches.renewAll(this.store, leases, this.timing.leaseDuration(), this.timing.storeCallTimeout());
	}

	private Map<String, Lease> readBatch(List<String> groups) {
		if (groups.size() == 1) {
			String group = groups.get(0);
			return this.store.read(group, this.timing.storeCallTimeout())
				.map((lease) -> Map.of(group, lease))
				.orElse(Map.of());
		}
		return Batches.readAll(this.store, groups, this.timing.storeCallTimeout());
	}

	private Map<String, Lease> acquireBatch(List<String> groups) {
		String candidateId = this.runtime.candidateId();
		if (groups.size() == 1) {
			String group = groups.get(0);
			return this.store
				.tryAcquire(group, candidateId, this.timing.leaseDuration(), this.timing.storeCallTimeout())
				.map((lease) -> Map.of(group, lease))
				.orElse(Map.of());
		}
		return Batches.tryAcquireAll(this.store, groups, candidateId, this.timing.leaseDuration(),
				this.timing.storeCallTimeout());
	}

	/**
	 * Hands each group its outcome, so that whatever goes wrong with one group's (an
	 * exception nobody expected) leaves the others' outcomes delivered: a belief that a
	 * round renewed and nobody was told of would end at its deadline for nothing.
	 */
	private static <T> void eachOnItsOwn(List<T> items, Consumer<T> action) {
		for (T item : items) {
			try {
				action.accept(item);
			}
			catch (RuntimeException ex) {
				logger.error("Could not hand a group its part of the round's outcome", ex);
			}
		}
	}

	private static void rethrowIfFatal(Throwable ex) {
		if (ex instanceof VirtualMachineError error) {
			throw error;
		}
	}

	/**
	 * The groups a batch answered for: all of them, or those a batch cut short answered
	 * for, the others having failed.
	 */
	private record Answered(@Nullable BatchCutShortException cutShort) {

		static final Answered ALL = new Answered(null);

		boolean includes(String group) {
			return this.cutShort == null || this.cutShort.answered().contains(group);
		}

		Throwable failure() {
			return (this.cutShort != null && this.cutShort.getCause() != null) ? this.cutShort.getCause()
					: this.cutShort;
		}

	}

}
