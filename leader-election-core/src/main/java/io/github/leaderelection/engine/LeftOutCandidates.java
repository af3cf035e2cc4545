package io.github.leaderelection.engine;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The candidates that balancing leaves out for a while: one that leads nothing, that the
 * last plan gave groups to and that did not take any, three rounds in a row. It announces
 * itself but cannot lead (its store calls fail, or it stopped competing), and moving
 * groups to it would only make them come back, over and over. Each time it happens again
 * it is left out twice as long, from 4 retry periods up to 512; a candidate that takes a
 * group is trusted again at once. A candidate that leads groups is never left out: it
 * shows that it can lead, and what the plan gave it may not have come for reasons of the
 * givers' (a giver cut off from the store fails over to whoever comes first), which would
 * otherwise leave healthy candidates out and the spread stuck.
 *
 * <p>
 * A pure policy over what the rounds report, on the clock they give it. Not thread-safe.
 */
final class LeftOutCandidates {

	/** Rounds in a row a candidate may take none of what the plan gave it. */
	static final int STRIKES = 3;

	/** The longest a candidate that takes nothing is left out, in retry periods. */
	static final int MAX_LEFT_OUT_PERIODS = 512;

	private final String self;

	private final long periodNanos;

	private Map<String, Integer> lastLoads = Map.of();

	private Map<String, Integer> expected = Map.of();

	private final Map<String, Integer> strikes = new HashMap<>();

	private final Map<String, Integer> leftOutPeriods = new HashMap<>();

	private final Map<String, Long> ignoredUntil = new HashMap<>();

	/**
	 * @param self this node's candidate, never left out
	 * @param periodNanos the retry period, the unit of how long a candidate is left out
	 */
	LeftOutCandidates(String self, long periodNanos) {
		this.self = self;
		this.periodNanos = periodNanos;
	}

	/** The live candidates less those left out at the given instant. */
	Map<String, Integer> considered(Map<String, Integer> live, long now) {
		Map<String, Integer> considered = new TreeMap<>(live);
		this.ignoredUntil.forEach((candidate, until) -> {
			if (now - until < 0 && !candidate.equals(this.self)) {
				considered.remove(candidate);
			}
		});
		return considered;
	}

	/**
	 * Takes in who leads how many groups at a round, against what the plan before gave
	 * each candidate.
	 * @return the candidates left out from now on, with the retry periods each is left
	 * out for
	 */
	Map<String, Integer> noteLoads(Map<String, Integer> loads, long now) {
		Map<String, Integer> leftOut = new LinkedHashMap<>();
		for (Map.Entry<String, Integer> load : loads.entrySet()) {
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
				this.ignoredUntil.put(candidate, now + periods * this.periodNanos);
				leftOut.put(candidate, periods);
			}
		}
		this.lastLoads = loads;
		return leftOut;
	}

	/** Takes in what the round's plan gives each candidate. */
	void expect(Map<String, Integer> receipts) {
		this.expected = receipts;
	}

}
