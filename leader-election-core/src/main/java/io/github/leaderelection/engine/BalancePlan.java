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

import org.jspecify.annotations.Nullable;

/**
 * What one node sees of the live candidates and the holders of its groups, and the plan
 * that every node draws from it (see {@link Balancer}): who leads how many groups, each
 * candidate's share, and the groups this node is to hand over. A pure function of what it
 * is given, without store, clock or threads.
 */
final class BalancePlan {

	/**
	 * A group of this node's as a balancing round sees it.
	 *
	 * @param name the group
	 * @param holder the candidate that leads it as this node knows, or null if none
	 * @param grantedNanos when this node was granted it, meaningful when it leads it
	 */
	record Group(String name, @Nullable String holder, long grantedNanos) {

	}

	private final String self;

	private final Map<String, Integer> live;

	private final Map<String, Integer> loads;

	private final Map<String, Double> shares;

	private final List<Group> ledHere;

	private final Map<String, String> preferredLeaders;

	/** What the plan gives each candidate, free groups included; set by ownMoves. */
	private Map<String, Integer> receipts = Map.of();

	private BalancePlan(String self, Map<String, Integer> live, Map<String, Integer> loads, Map<String, Double> shares,
			List<Group> ledHere, Map<String, String> preferredLeaders) {
		this.self = self;
		this.live = live;
		this.loads = loads;
		this.shares = shares;
		this.ledHere = ledHere;
		this.preferredLeaders = preferredLeaders;
	}

	/**
	 * Counts who leads what; null when this node is not on the list, or every candidate
	 * listed is still starting (weight 0).
	 * @param live every live candidate with its weight
	 * @param groups the groups this node competes for
	 */
	static @Nullable BalancePlan of(String self, Map<String, Integer> live, Collection<Group> groups,
			Map<String, String> preferredLeaders) {
		if (!live.containsKey(self)) {
			return null;
		}
		Map<String, Integer> loads = new TreeMap<>();
		live.keySet().forEach((candidate) -> loads.put(candidate, 0));
		List<Group> ledHere = new ArrayList<>();
		for (Group group : groups) {
			if (group.holder() != null && loads.containsKey(group.holder())) {
				loads.merge(group.holder(), 1, Integer::sum);
			}
			if (self.equals(group.holder())) {
				ledHere.add(group);
			}
		}
		int totalWeight = live.values().stream().mapToInt(Integer::intValue).sum();
		if (totalWeight == 0) {
			return null;
		}
		Map<String, Double> shares = new HashMap<>();
		for (Map.Entry<String, Integer> candidate : live.entrySet()) {
			shares.put(candidate.getKey(), (double) groups.size() * candidate.getValue() / totalWeight);
		}
		return new BalancePlan(self, Map.copyOf(live), loads, shares, ledHere, preferredLeaders);
	}

	/** Every live candidate listed, with its weight. */
	Map<String, Integer> live() {
		return this.live;
	}

	/** How many groups each live candidate leads. */
	Map<String, Integer> loads() {
		return this.loads;
	}

	/** Each live candidate's share of the groups, in proportion to its weight. */
	Map<String, Double> shares() {
		return this.shares;
	}

	/** What the last {@link #ownMoves} gives each candidate, free groups included. */
	Map<String, Integer> receipts() {
		return this.receipts;
	}

	/**
	 * Whether this node leads at least the floor of its share, counting the groups it
	 * took since.
	 */
	boolean selfAtShare(int takenSince) {
		return this.loads.get(this.self) + takenSince >= Math.floor(this.shares.get(this.self));
	}

	/** Whether another candidate leads less than the ceiling of its share. */
	boolean othersBelowShare() {
		for (Map.Entry<String, Integer> load : this.loads.entrySet()) {
			if (!load.getKey().equals(this.self) && load.getValue() < Math.ceil(this.shares.get(load.getKey()))) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Draws the plan every node draws, and returns this node's part of it: the groups to
	 * hand over, none that it has led for less than the minimum tenure.
	 * @param now the clock the grant instants are read against
	 * @param minTenureNanos how long this node leads a group before it may hand it over
	 */
	List<String> ownMoves(long now, long minTenureNanos) {
		Map<String, Integer> planned = new TreeMap<>(this.loads);
		List<String> toHandOver = new ArrayList<>();
		List<Group> movable = new ArrayList<>();
		for (Group group : this.ledHere) {
			String preferred = this.preferredLeaders.get(group.name());
			if (preferred != null && !preferred.equals(this.self) && this.live.containsKey(preferred)) {
				// Planned as the candidate's in every node's plan, but handed to it only
				// after the tenure too: a pinned group whose candidate never takes it
				// would otherwise go round the others without a leader, one hold-back
				// after another, each taking it only to hand it on at once.
				if (now - group.grantedNanos() >= minTenureNanos) {
					toHandOver.add(group.name());
				}
				planned.merge(this.self, -1, Integer::sum);
				planned.merge(preferred, 1, Integer::sum);
			}
			else if (!this.self.equals(preferred)) {
				movable.add(group);
			}
		}
		int free = Math.max(0, (int) Math.round(this.shares.values().stream().mapToDouble(Double::doubleValue).sum())
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
		// The groups led longest move first, and a group led for less than the minimum
		// tenure does not move at all: the nodes see each other's holders and the list
		// of live candidates a round apart, so their plans differ for a while after
		// every change (a node joins, say), and a group that has just moved here would
		// otherwise be handed on again, a flap. By name among those granted together.
		movable.removeIf((group) -> now - group.grantedNanos() < minTenureNanos);
		movable.sort(Comparator.comparingLong((Group group) -> group.grantedNanos() - now)
			.thenComparing(Comparator.comparing(Group::name).reversed()));
		movable.subList(0, Math.min(ownMoves, movable.size())).forEach((group) -> toHandOver.add(group.name()));
		return toHandOver;
	}

	/**
	 * A move from giver to taker brings both closer to their shares: the giver stays at
	 * or above the floor of its share and the taker at or below the ceiling of its own,
	 * and one of them was outside its share.
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
	 * The giver furthest above its share, among the candidates that are ready: one that
	 * is starting (weight 0) hands nothing over until it is, so a plan that counted on it
	 * would expect a taker to receive what never comes.
	 */
	private String furthestAbove(Map<String, Integer> planned) {
		return planned.keySet()
			.stream()
			.filter((candidate) -> this.live.get(candidate) > 0)
			.max(Comparator.comparingDouble((String candidate) -> planned.get(candidate) - this.shares.get(candidate))
				.thenComparing(Comparator.reverseOrder()))
			.orElseThrow();
	}

	private @Nullable String furthestBelow(Map<String, Integer> planned, Set<String> excluded) {
		return planned.keySet()
			.stream()
			.filter((candidate) -> !excluded.contains(candidate))
			.min(Comparator.comparingDouble((String candidate) -> planned.get(candidate) - this.shares.get(candidate))
				.thenComparing(Comparator.naturalOrder()))
			.orElse(null);
	}

}
