package io.github.leaderelection.engine;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import io.github.leaderelection.LeaderInfo;
import io.github.leaderelection.spi.CandidateListStore;
import io.github.leaderelection.spi.LeaseStore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spreads the leadership of a node's groups over the live candidates, in proportion to
 * their weights: each leads between the floor and the ceiling of its share.
 *
 * <p>
 * Once per retry period the node keeps its entry on the store's list of live candidates
 * ({@link CandidateListStore#keepCandidateAlive}), which answers with every live
 * candidate. From that list and the holders it already knows (it renews its own groups
 * and reads the others every period), every node draws the same plan: pinned groups go to
 * their preferred candidate, groups that are free go to the candidates furthest below
 * their share, and then, one group at a time, a candidate above its share gives one to a
 * candidate below it, as long as that brings both closer. Each node carries out only its
 * own part: it hands over the groups the plan takes from it, by ending its leadership and
 * releasing the lease ({@link RevocationReason#REBALANCED}). Nothing moves while every
 * candidate is within its share, so a balanced spread stays as it is.
 *
 * <p>
 * The candidate that is to take a released group gets it first because the others hold
 * back: a candidate already at its share (or a group pinned to another live candidate)
 * waits one retry period after it first saw the group free before it takes it. That wait,
 * at most one retry period, is the only thing balancing adds to the time a group is
 * without a leader; a candidate that crashed is failed over as without balancing. A
 * candidate that stops leaves the list before it releases its groups, and the others list
 * the live candidates again when they see a group released after their last list:
 * otherwise they would hold its groups back for it.
 *
 * <p>
 * A node that is starting announces itself with weight 0 until every one of its elections
 * has joined its group in the store and heard from it: it is on the list, but its share
 * is none, so nobody hands it a group it is not ready to take yet (joining a hundred
 * groups on ZooKeeper takes a second or more on a busy machine, and a group handed to a
 * node still joining stays without a leader that long). Until then it hands nothing over
 * either. Groups joined later do not make it start over.
 *
 * <p>
 * Balancing assumes that the live candidates joined the same groups: it counts the groups
 * this node joined.
 */
final class Balancer implements GroupCalls.Balancing {

	private static final Logger logger = LoggerFactory.getLogger(Balancer.class);

	/**
	 * How long a node leads a group before balancing moves it on, in retry periods:
	 * longer than the round or two in which the nodes' plans may differ.
	 */
	private static final int MIN_TENURE_PERIODS = 3;

	/**
	 * Rounds after which a node that is still not ready says so: joining takes a round or
	 * two, and a second or more for a hundred groups on ZooKeeper.
	 */
	private static final int NOT_READY_WARNING_ROUNDS = 20;

	private final ElectionRuntime runtime;

	private final LeaseStore store;

	private final String self;

	private final int weight;

	private final Map<String, String> preferredLeaders;

	private final Supplier<Collection<GroupElector>> electors;

	private volatile @Nullable View view;

	/** Whether every election of this node has joined; weight 0 until then. */
	private volatile boolean ready;

	/** When this node's first balancing round ran; 0 before. */
	private long firstRoundNanos;

	/** Balancing rounds so far in which this node was not ready; see isReady. */
	private int roundsNotReady;

	private boolean failing;

	/** Whether this node has left the list of live candidates, on shutdown. */
	private boolean left;

	/** Whether {@link #listAgain} is on its way. */
	private final AtomicBoolean listingAgain = new AtomicBoolean();

	/**
	 * The groups held back on a list older than their release, with when each was first
	 * seen free: {@link #listAgain} answers them.
	 */
	private final Map<GroupElector, Long> waitingForList = new ConcurrentHashMap<>();

	/** Who took what the last plan gave them. Guarded by this. */
	private final LeftOutCandidates leftOut;

	Balancer(ElectionRuntime runtime, int weight, Map<String, String> preferredLeaders,
			Supplier<Collection<GroupElector>> electors) {
		this.runtime = runtime;
		this.store = runtime.store();
		this.self = runtime.candidateId();
		this.weight = weight;
		this.preferredLeaders = Map.copyOf(preferredLeaders);
		this.electors = electors;
		this.leftOut = new LeftOutCandidates(this.self, runtime.timing().retryPeriod().toNanos());
	}

	/**
	 * Checks, once at start, that the store can list candidates: balancing on a store
	 * that cannot would silently do nothing.
	 */
	void checkStore() {
		if (!(this.store instanceof CandidateListStore)) {
			throw new IllegalStateException("Balancing needs a store that lists live candidates, and the "
					+ this.store.backend() + " store cannot");
		}
		try {
			candidates().keepCandidateAlive(this.self, 0, this.runtime.timing().leaseDuration(),
					this.runtime.timing().storeCallTimeout());
		}
		catch (UnsupportedOperationException ex) {
			throw new IllegalStateException("Balancing needs a store that lists live candidates, and the "
					+ this.store.backend() + " store cannot: " + ex.getMessage(), ex);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not reach the {} store to announce candidate '{}' for balancing yet; retrying every {}",
					this.store.backend(), this.self, this.runtime.timing().retryPeriod(), ex);
		}
	}

	/**
	 * One balancing round, on a store thread: announce, then act on the plan. Rounds run
	 * one at a time, also when an administrator asks for one.
	 */
	// The monitor is held across the store call: rounds, lists and leave run one at a
	// time on store threads, each bounded by the call timeout, and nothing else takes it.
	synchronized void round() {
		if (this.left) {
			return;
		}
		boolean ready = isReady();
		long asked = this.runtime.nanoTime();
		Map<String, Integer> live = announce(ready);
		if (live == null) {
			this.view = null;
			return;
		}
		long now = this.runtime.nanoTime();
		View current = viewOf(live, asked, now);
		if (current != null) {
			this.leftOut.noteLoads(current.plan.loads(), now)
				.forEach((candidate, periods) -> logger.warn(
						"Candidate '{}' took none of the groups balancing gave "
								+ "it in {} rounds; leaving it out of balancing for {} retry periods",
						candidate, LeftOutCandidates.STRIKES, periods));
		}
		this.view = current;
		if (current == null || !ready) {
			return;
		}
		List<GroupElector> moves = current.plan
			.ownMoves(now, MIN_TENURE_PERIODS * this.runtime.timing().retryPeriod().toNanos())
			.stream()
			.map(current.electors::get)
			.toList();
		this.leftOut.expect(current.plan.receipts());
		if (moves.isEmpty()) {
			return;
		}
		Map<String, Integer> loads = current.plan.loads();
		logger.info(
				"Handing over {} group(s) to spread leadership: this candidate leads {} and its share is {}; "
						+ "leaders by candidate {}",
				moves.size(), loads.get(this.self), String.format("%.1f", current.plan.shares().get(this.self)), loads);
		moves.forEach(GroupElector::handOver);
	}

	/**
	 * Keeps this node on the list of live candidates.
	 * @return every live candidate with its weight, or null if the store did not answer
	 */
	private @Nullable Map<String, Integer> announce(boolean ready) {
		try {
			Map<String, Integer> live = keepAlive(ready);
			this.failing = false;
			return live;
		}
		catch (RuntimeException ex) {
			if (!this.failing) {
				logger.warn("Could not announce candidate '{}' to the {} store for balancing; not moving groups until "
						+ "it answers: {}", this.self, this.store.backend(), ex.toString());
			}
			this.failing = true;
			return null;
		}
	}

	/** The store's list of live candidates, which {@link #checkStore()} made sure of. */
	private CandidateListStore candidates() {
		return (CandidateListStore) this.store;
	}

	/** Keeps this node on the list, with no share while it is not ready, and lists it. */
	private Map<String, Integer> keepAlive(boolean ready) {
		return candidates().keepCandidateAlive(this.self, ready ? this.weight : 0,
				this.runtime.timing().leaseDuration(), this.runtime.timing().storeCallTimeout());
	}

	/**
	 * The view of the live candidates listed, less those left out for now; null while
	 * some group's holder is not known yet (it has not reached the store since it
	 * started), this node is not on the list, or every candidate is still starting.
	 */
	private @Nullable View viewOf(Map<String, Integer> live, long asked, long now) {
		Map<String, GroupElector> competing = new TreeMap<>();
		List<BalancePlan.Group> groups = new ArrayList<>();
		for (GroupElector elector : this.electors.get()) {
			if (!elector.isCompeting()) {
				continue;
			}
			if (!elector.hasReachedStore()) {
				return null;
			}
			competing.put(elector.group(), elector);
			String holder = elector.isLeader() ? this.self
					: elector.currentLeader().map(LeaderInfo::candidateId).orElse(null);
			groups.add(new BalancePlan.Group(elector.group(), holder,
					this.self.equals(holder) ? elector.grantedNanos() : 0));
		}
		BalancePlan plan = BalancePlan.of(this.self, this.leftOut.considered(live, now), groups, this.preferredLeaders);
		return (plan != null) ? new View(plan, asked, competing) : null;
	}

	/**
	 * Lists (and announces) the live candidates again, between rounds, because a group
	 * that this node holds back was first seen free after the last list was asked for,
	 * and then has each such group look again, once. The candidate the group is held back
	 * for may be the very one that released it: a node that stops leaves the list before
	 * it releases its groups, and a group must not wait a retry period for a candidate
	 * that is gone (see {@link #holdsBack}). The groups a hand-over of many releases one
	 * after another wait together: one list answers all those seen free before it was
	 * asked for. Moves nothing and counts no round: the plan is the rounds' business, and
	 * so is a store that does not answer (the view is kept, and the groups wait out their
	 * hold-back, or a failing list would be asked for over and over).
	 */
	private void listAgain() {
		long asked = this.runtime.nanoTime();
		boolean listed = false;
		try {
			synchronized (this) { // across the call, as in round()
				if (this.left) {
					return;
				}
				this.view = viewOf(keepAlive(this.ready), asked, this.runtime.nanoTime());
				listed = true;
			}
		}
		catch (RuntimeException ex) {
			logger.debug("Could not list the live candidates again for balancing; the next round does", ex);
		}
		finally {
			this.listingAgain.set(false);
		}
		List<GroupElector> answered = new ArrayList<>();
		boolean answeredAll = !listed;
		// Each entry is answered once, also when the next list has started meanwhile.
		this.waitingForList.forEach((elector, freeSince) -> {
			if ((answeredAll || asked - freeSince >= 0) && this.waitingForList.remove(elector, freeSince)) {
				answered.add(elector);
			}
		});
		if (listed) {
			answered.forEach(GroupElector::lookAgainIfSeenFree);
			if (!this.waitingForList.isEmpty()) {
				listAgainSoon(); // seen free while this list was on its way
			}
		}
	}

	private void listAgainSoon() {
		if (this.listingAgain.compareAndSet(false, true) && !this.runtime.executeStoreTask(this::listAgain)) {
			this.listingAgain.set(false);
		}
	}

	/**
	 * Whether every election of this node has joined its group and heard from the store;
	 * once true, true for good.
	 */
	private boolean isReady() {
		if (this.ready) {
			return true;
		}
		long now = this.runtime.nanoTime();
		if (this.firstRoundNanos == 0) {
			this.firstRoundNanos = now;
		}
		if (this.runtime.watchBeforeLeading()
				&& now - this.firstRoundNanos < this.runtime.timing().leaseDuration().toNanos()) {
			return false; // it would take the groups handed to it only a lease duration
							// on
		}
		List<String> waiting = this.electors.get()
			.stream()
			.filter((elector) -> elector.isCompeting() && !(elector.hasJoined() && elector.hasReachedStore()))
			.map(GroupElector::group)
			.toList();
		this.ready = waiting.isEmpty();
		if (!this.ready && ++this.roundsNotReady == NOT_READY_WARNING_ROUNDS) {
			logger.warn("Candidate '{}' is still not ready to take a share of the groups after {} retry periods: "
					+ "{} group(s) have not joined the {} store or heard from it yet ({}); until they have, the "
					+ "candidate announces itself with weight 0 and balancing gives it nothing", this.self,
					NOT_READY_WARNING_ROUNDS, waiting.size(), this.store.backend(),
					String.join(", ", waiting.subList(0, Math.min(10, waiting.size())))
							+ ((waiting.size() > 10) ? ", ..." : ""));
		}
		return this.ready;
	}

	/** Leaves the list of live candidates, on shutdown. */
	synchronized void leave() {
		// Synchronized, and no announcing after it: a round on its way would otherwise
		// put this candidate back on the list, and the others would hold its released
		// groups back for it.
		this.left = true;
		try {
			candidates().removeCandidate(this.self, this.runtime.timing().storeCallTimeout());
		}
		catch (RuntimeException ex) {
			logger.debug("Could not remove candidate '{}' from the {} store; its entry runs out on its own", this.self,
					this.store.backend(), ex);
		}
	}

	/**
	 * Whether this node should leave a free group to another candidate for now: the group
	 * is pinned to another live candidate, or this node leads at least the floor of its
	 * share while another live candidate leads less than the ceiling of its own. The
	 * floor, not the ceiling: the view may be a retry period old, and a candidate that
	 * joined since has no share in it yet. When the view was asked for before the group
	 * was seen free (and the hold-back is not over yet), this answers from it but also
	 * has the live candidates listed again ({@link #listAgain}), once per group seen
	 * free; once the list is in, the group is looked at again: it is not held back a
	 * whole retry period for a candidate that has left since. If the list fails, the
	 * group waits out its hold-back.
	 * @param elector the election of the group whose lease was seen released
	 * @param freeSinceNanos when this node first saw it released
	 */
	@Override
	public boolean holdsBack(GroupElector elector, long freeSinceNanos) {
		View current = this.view;
		if (current == null) {
			return false;
		}
		String preferred = this.preferredLeaders.get(elector.group());
		boolean holdsBack = (preferred != null && !preferred.equals(this.self)
				&& current.plan.live().containsKey(preferred))
				|| (current.plan.selfAtShare(current.selfTaken.get()) && current.plan.othersBelowShare());
		if (holdsBack && current.askedNanos - freeSinceNanos < 0
				&& this.runtime.nanoTime() - freeSinceNanos < this.runtime.timing().retryPeriod().toNanos()
				&& this.waitingForList.putIfAbsent(elector, freeSinceNanos) == null) {
			listAgainSoon();
		}
		return holdsBack;
	}

	@Override
	public void acquired() {
		View current = this.view;
		if (current != null) {
			current.selfTaken.incrementAndGet();
		}
	}

	/**
	 * How many groups each live candidate leads, as this node last saw it (at its last
	 * round, or a list asked for between rounds); empty when not balancing or before the
	 * first round.
	 */
	Map<String, Integer> leadersByCandidate() {
		View current = this.view;
		return (current != null) ? new TreeMap<>(current.plan.loads()) : Map.of();
	}

	/**
	 * What a round, or a list between rounds, saw, and its plan.
	 *
	 * @param plan the plan drawn from it
	 * @param askedNanos when the list of live candidates was asked for
	 * @param electors the elections it counted, by group
	 * @param selfTaken the groups this node took since, counted until the next round
	 * recounts
	 */
	private record View(BalancePlan plan, long askedNanos, Map<String, GroupElector> electors,
			AtomicInteger selfTaken) {

		View(BalancePlan plan, long askedNanos, Map<String, GroupElector> electors) {
			this(plan, askedNanos, electors, new AtomicInteger());
		}

	}

}
