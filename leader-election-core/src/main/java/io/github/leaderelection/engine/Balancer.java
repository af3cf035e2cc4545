package io.github.leaderelection.engine;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import io.github.leaderelection.LeaderInfo;
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
 * ({@link LeaseStore#keepCandidateAlive}), which answers with every live candidate. From
 * that list and the holders it already knows (it renews its own groups and reads the
 * others every period), every node draws the same plan: pinned groups go to their
 * preferred candidate, groups that are free go to the candidates furthest below their
 * share, and then, one group at a time, a candidate above its share gives one to a
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
final class Balancer {

	private static final Logger logger = LoggerFactory.getLogger(Balancer.class);

	/** Rounds in a row a candidate may take none of what the plan gave it. */
	private static final int STRIKES = 3;

	/**
	 * How long a node leads a group before balancing moves it on, in retry periods:
	 * longer than the round or two in which the nodes' plans may differ.
	 */
	private static final int MIN_TENURE_PERIODS = 3;

	/** The longest a candidate that takes nothing is left out, in retry periods. */
	private static final int MAX_LEFT_OUT_PERIODS = 512;

	/**
	 * Rounds after which a node that is still not ready says so: joining takes a round or
	 * two, and a second or more for a hundred groups on ZooKeeper.
	 */
	private static final int NOT_READY_WARNING_ROUNDS = 20;

	private final LeaderElectionEngine engine;

	private final LeaseStore store;

	private final String self;

	private final int weight;

	private final Map<String, String> preferredLeaders;

	private final Supplier<Collection<GroupElector>> electors;

	private volatile @Nullable View view;

	/** Whether every election of this node has joined; weight 0 until then. */
	private volatile boolean ready;

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

	// Guarded by this: who took what the last plan gave them (see
	// noteWhoTookWhatWasPlanned)

	private Map<String, Integer> lastLoads = Map.of();

	private Map<String, Integer> expected = Map.of();

	private final Map<String, Integer> strikes = new HashMap<>();

	private final Map<String, Integer> leftOutPeriods = new HashMap<>();

	private final Map<String, Long> ignoredUntil = new HashMap<>();

	Balancer(LeaderElectionEngine engine, int weight, Map<String, String> preferredLeaders,
			Supplier<Collection<GroupElector>> electors) {
		this.engine = engine;
		this.store = engine.store();
		this.self = engine.candidateId();
		this.weight = weight;
		this.preferredLeaders = Map.copyOf(preferredLeaders);
		this.electors = electors;
	}

	/**
	 * Checks, once at start, that the store can list candidates: balancing on a store
	 * that cannot would silently do nothing.
	 */
	void checkStore() {
		try {
			this.store.keepCandidateAlive(this.self, 0, this.engine.timing().leaseDuration(),
					this.engine.timing().storeCallTimeout());
		}
		catch (UnsupportedOperationException ex) {
			throw new IllegalStateException("Balancing needs a store that lists live candidates, and the "
					+ this.store.backend() + " store cannot: " + ex.getMessage(), ex);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not reach the {} store to announce candidate '{}' for balancing yet; retrying every {}",
					this.store.backend(), this.self, this.engine.timing().retryPeriod(), ex);
		}
	}

	/**
	 * One balancing round, on a store thread: announce, then act on the plan. Rounds run
	 * one at a time, also when an administrator asks for one.
	 */
	synchronized void round() {
		if (this.left) {
			return;
		}
		boolean ready = isReady();
		long asked = this.engine.nanoTime();
		Map<String, Integer> live = announce(ready);
		if (live == null) {
			this.view = null;
			return;
		}
		long now = this.engine.nanoTime();
		View current = viewOf(live, asked, now);
		if (current != null) {
			noteWhoTookWhatWasPlanned(current, now);
		}
		this.view = current;
		if (current == null || !ready) {
			return;
		}
		List<GroupElector> moves = current.ownMoves(now,
				MIN_TENURE_PERIODS * this.engine.timing().retryPeriod().toNanos());
		this.expected = current.receipts;
		if (moves.isEmpty()) {
			return;
		}
		logger.info(
				"Handing over {} group(s) to spread leadership: this candidate leads {} and its share is {}; "
						+ "leaders by candidate {}",
				moves.size(), current.loads.get(this.self), String.format("%.1f", current.shares.get(this.self)),
				current.loads);
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

	/** Keeps this node on the list, with no share while it is not ready, and lists it. */
	private Map<String, Integer> keepAlive(boolean ready) {
		return this.store.keepCandidateAlive(this.self, ready ? this.weight : 0, this.engine.timing().leaseDuration(),
				this.engine.timing().storeCallTimeout());
	}

	/** The view of the live candidates listed, less those left out for now. */
	private @Nullable View viewOf(Map<String, Integer> live, long asked, long now) {
		Map<String, Integer> considered = new TreeMap<>(live);
		this.ignoredUntil.forEach((candidate, until) -> {
			if (now - until < 0 && !candidate.equals(this.self)) {
				considered.remove(candidate);
			}
		});
		return View.of(this.self, considered, asked, this.electors.get(), this.preferredLeaders);
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
		long asked = this.engine.nanoTime();
		boolean listed = false;
		try {
			synchronized (this) {
				if (this.left) {
					return;
				}
				this.view = viewOf(keepAlive(this.ready), asked, this.engine.nanoTime());
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
		if (this.listingAgain.compareAndSet(false, true) && !this.engine.executeStoreTask(this::listAgain)) {
			this.listingAgain.set(false);
		}
	}

	/**
	 * Leaves out, for a while, a candidate that leads nothing, that the last plan gave
	 * groups to and that did not take any, three rounds in a row: it announces itself but
	 * cannot lead (its store calls fail, or it stopped competing), and moving groups to
	 * it would only make them come back, over and over. Each time it happens again it is
	 * left out twice as long, from 4 retry periods up to 512; a candidate that takes a
	 * group is trusted again at once. A candidate that leads groups is never left out: it
	 * shows that it can lead, and what the plan gave it may not have come for reasons of
	 * the givers' (a giver cut off from the store fails over to whoever comes first),
	 * which would otherwise leave healthy candidates out and the spread stuck.
	 */
	private void noteWhoTookWhatWasPlanned(View current, long now) {
		long period = this.engine.timing().retryPeriod().toNanos();
		for (Map.Entry<String, Integer> load : current.loads.entrySet()) {
			String candidate = load.getKey();
			Integer before = this.lastLoads.get(candidate);
			if (before == null || candidate.equals(this.self)) {
				continue;
			}
			if (load.getValue() > before) {
				this.strikes.remove(candidate);
				this.leftOutPeriods.remove(candidate);
			}
			else if (load.getValue() == 0 && this.expected.getOrDefault(candidate, 0) > 0
					&& this.strikes.merge(candidate, 1, Integer::sum) >= STRIKES) {
				this.strikes.remove(candidate);
				int periods = Math.min(2 * this.leftOutPeriods.getOrDefault(candidate, 2), MAX_LEFT_OUT_PERIODS);
				this.leftOutPeriods.put(candidate, periods);
				this.ignoredUntil.put(candidate, now + periods * period);
				logger.warn("Candidate '{}' took none of the groups balancing gave it in {} rounds; leaving it out of "
						+ "balancing for {} retry periods", candidate, STRIKES, periods);
			}
		}
		this.lastLoads = current.loads;
	}

	/**
	 * Whether every election of this node has joined its group and heard from the store;
	 * once true, true for good.
	 */
	private boolean isReady() {
		if (this.ready) {
			return true;
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
			this.store.removeCandidate(this.self, this.engine.timing().storeCallTimeout());
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
	boolean holdsBack(GroupElector elector, long freeSinceNanos) {
		View current = this.view;
		if (current == null) {
			return false;
		}
		String preferred = this.preferredLeaders.get(elector.group());
		boolean holdsBack = (preferred != null && !preferred.equals(this.self) && current.live.containsKey(preferred))
				|| (current.selfAtShare() && current.othersBelowShare());
		if (holdsBack && current.askedNanos - freeSinceNanos < 0
				&& this.engine.nanoTime() - freeSinceNanos < this.engine.timing().retryPeriod().toNanos()
				&& this.waitingForList.putIfAbsent(elector, freeSinceNanos) == null) {
			listAgainSoon();
		}
		return holdsBack;
	}

	/** This node took a group: counted until the next round recounts. */
	void acquired() {
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
		return (current != null) ? new TreeMap<>(current.loads) : Map.of();
	}

	/** What a round saw, and its plan. */
	private static final class View {

		final String self;

		final Map<String, Integer> live;

		/** When the list of live candidates was asked for. */
		final long askedNanos;

		final Map<String, Integer> loads;

		final Map<String, Double> shares;

		final List<GroupElector> ledHere;

		final Map<String, String> preferredLeaders;

		final AtomicInteger selfTaken = new AtomicInteger();

		/** What the plan gives each candidate, free groups included; set by ownMoves. */
		Map<String, Integer> receipts = Map.of();

		private View(String self, Map<String, Integer> live, long askedNanos, Map<String, Integer> loads,
				Map<String, Double> shares, List<GroupElector> ledHere, Map<String, String> preferredLeaders) {
			this.self = self;
			this.live = live;
			this.askedNanos = askedNanos;
			this.loads = loads;
			this.shares = shares;
			this.ledHere = ledHere;
			this.preferredLeaders = preferredLeaders;
		}

		/**
		 * Counts who leads what; null while some group's holder is not known yet (it has
		 * not reached the store since it started) or this node is not on the list.
		 */
		static @Nullable View of(String self, Map<String, Integer> live, long askedNanos,
				Collection<GroupElector> electors, Map<String, String> preferredLeaders) {
			if (!live.containsKey(self)) {
				return null;
			}
			Map<String, Integer> loads = new TreeMap<>();
			live.keySet().forEach((candidate) -> loads.put(candidate, 0));
			List<GroupElector> ledHere = new ArrayList<>();
			int groups = 0;
			for (GroupElector elector : electors) {
				if (!elector.isCompeting()) {
					continue;
				}
				if (!elector.hasReachedStore()) {
					return null;
				}
				groups++;
				String holder = elector.isLeader() ? self
						: elector.currentLeader().map(LeaderInfo::candidateId).orElse(null);
				if (holder != null && loads.containsKey(holder)) {
					loads.merge(holder, 1, Integer::sum);
				}
				if (self.equals(holder)) {
					ledHere.add(elector);
				}
			}
			int totalWeight = live.values().stream().mapToInt(Integer::intValue).sum();
			if (totalWeight == 0) {
				return null; // every candidate is still starting
			}
			Map<String, Double> shares = new HashMap<>();
			for (Map.Entry<String, Integer> candidate : live.entrySet()) {
				shares.put(candidate.getKey(), (double) groups * candidate.getValue() / totalWeight);
			}
			return new View(self, live, askedNanos, loads, shares, ledHere, preferredLeaders);
		}

		boolean selfAtShare() {
			return this.loads.get(this.self) + this.selfTaken.get() >= Math.floor(this.shares.get(this.self));
		}

		boolean othersBelowShare() {
			for (Map.Entry<String, Integer> load : this.loads.entrySet()) {
				if (!load.getKey().equals(this.self) && load.getValue() < Math.ceil(this.shares.get(load.getKey()))) {
					return true;
				}
			}
			return false;
		}

		/**
		 * Draws the plan every node draws, and returns this node's part of it.
		 * @param now the engine's clock, which the electors' grant instants are read
		 * against
		 * @param minTenureNanos how long this node leads a group before it may hand it
		 * over
		 */
		List<GroupElector> ownMoves(long now, long minTenureNanos) {
			Map<String, Integer> planned = new TreeMap<>(this.loads);
			List<GroupElector> toHandOver = new ArrayList<>();
			List<GroupElector> movable = new ArrayList<>();
			for (GroupElector elector : this.ledHere) {
				String preferred = this.preferredLeaders.get(elector.group());
				if (preferred != null && !preferred.equals(this.self) && this.live.containsKey(preferred)) {
					toHandOver.add(elector);
					planned.merge(this.self, -1, Integer::sum);
					planned.merge(preferred, 1, Integer::sum);
				}
				else if (!this.self.equals(preferred)) {
					movable.add(elector);
				}
			}
			int free = Math.max(0,
					(int) Math.round(this.shares.values().stream().mapToDouble(Double::doubleValue).sum())
							- this.loads.values().stream().mapToInt(Integer::intValue).sum());
			Map<String, Integer> given = new TreeMap<>();
			for (int i = 0; i < free; i++) {
				String taker = furthestBelow(planned, Set.of());
				planned.merge(taker, 1, Integer::sum);
				given.merge(taker, 1, Integer::sum);
			}
			// A candidate that leads nothing yet gets one group per round until it has
			// shown that it takes what it is given: one that cannot lead then costs one
			// move per round, not its whole share.
			Set<String> probed = new HashSet<>();
			int ownMoves = 0;
			while (true) {
				String giver = furthestAbove(planned);
				String taker = furthestBelow(planned, probed);
				if (taker == null || !improves(planned, giver, taker)) {
					break;
				}
				planned.merge(giver, -1, Integer::sum);
				planned.merge(taker, 1, Integer::sum);
				given.merge(taker, 1, Integer::sum);
				if (this.loads.get(taker) == 0) {
					probed.add(taker);
				}
				if (giver.equals(this.self)) {
					ownMoves++;
				}
			}
			this.receipts = given;
			// The groups led longest move first, and a group led for less than
			// MIN_TENURE_PERIODS does not move at all: the nodes see each other's
			// holders and the list of live candidates a round apart, so their plans
			// differ for a while after every change (a node joins, say), and a group
			// that has just moved here would otherwise be handed on again, a flap. By
			// name among those granted together.
			Map<GroupElector, Long> granted = new HashMap<>();
			movable.forEach((elector) -> granted.put(elector, elector.grantedNanos()));
			movable.removeIf((elector) -> now - granted.get(elector) < minTenureNanos);
			movable.sort(Comparator.comparingLong((GroupElector elector) -> granted.get(elector) - now)
				.thenComparing(Comparator.comparing(GroupElector::group).reversed()));
			toHandOver.addAll(movable.subList(0, Math.min(ownMoves, movable.size())));
			return toHandOver;
		}

		/**
		 * A move from giver to taker brings both closer to their shares: the giver stays
		 * at or above the floor of its share and the taker at or below the ceiling of its
		 * own, and one of them was outside its share.
		 */
		private boolean improves(Map<String, Integer> planned, String giver, String taker) {
			if (giver.equals(taker)) {
				return false;
			}
			int give = planned.get(giver);
			int take = planned.get(taker);
			double giverShare = this.shares.get(giver);
			double takerShare = this.shares.get(taker);
			return give - 1 >= Math.floor(giverShare) && take + 1 <= Math.ceil(takerShare)
					&& (give > Math.ceil(giverShare) || take < Math.floor(takerShare));
		}

		/**
		 * The giver furthest above its share, among the candidates that are ready: one
		 * that is starting (weight 0) hands nothing over until it is, so a plan that
		 * counted on it would expect a taker to receive what never comes.
		 */
		private String furthestAbove(Map<String, Integer> planned) {
			return planned.keySet()
				.stream()
				.filter((candidate) -> this.live.get(candidate) > 0)
				.max(Comparator
					.comparingDouble((String candidate) -> planned.get(candidate) - this.shares.get(candidate))
					.thenComparing(Comparator.reverseOrder()))
				.orElseThrow();
		}

		private @Nullable String furthestBelow(Map<String, Integer> planned, Set<String> excluded) {
			return planned.keySet()
				.stream()
				.filter((candidate) -> !excluded.contains(candidate))
				.min(Comparator
					.comparingDouble((String candidate) -> planned.get(candidate) - this.shares.get(candidate))
					.thenComparing(Comparator.naturalOrder()))
				.orElse(null);
		}

	}

}
