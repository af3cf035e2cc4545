package io.github.leaderelection.benchmarks;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Figure 5: balancing on real processes. Node JVMs with balancing on (weight 1, no
 * preferred leaders) start one after another, each once the spread has settled after the
 * previous one; then the first node is killed with {@code kill -9}. The coordinator
 * counts who leads what from the nodes' grant and revocation lines (timestamps from
 * {@link System#nanoTime()} of processes on one host), and measures:
 * <ul>
 * <li>after each join: retry periods from the node's start until the spread (most minus
 * fewest groups led per live node) is at most 1 with every group led, for good (it stays
 * so for {@link #STABLE_PERIODS} retry periods), and the groups moved ({@code REBALANCED}
 * revocations) meanwhile;</li>
 * <li>after the kill: time until every group has a leader among the live nodes again, and
 * retry periods from then (and from the kill) until the spread is at most 1 for
 * good.</li>
 * </ul>
 */
final class Balance {

	/** How long a settled spread must stay at most 1 to count as settled. */
	static final int STABLE_PERIODS = 5;

	/** The longest wait for a spread to settle, in retry periods. */
	static final int MAX_PERIODS = 40;

	private final Contender contender;

	private final int groups;

	private final int nodeCount;

	private final Timing timing;

	private final Path logDir;

	private final BlockingQueue<NodeProcess.Event> events = new LinkedBlockingQueue<>();

	/** Groups each node leads, by node id, from its own lines. */
	private final Map<String, Set<String>> led = new TreeMap<>();

	/** Live nodes: started and not killed. */
	private final Set<String> live = new HashSet<>();

	private final List<long[]> rebalanced = new ArrayList<>();

	private final List<String> timeline = new ArrayList<>();

	private long lastEventNanos;

	Balance(Contender contender, int groups, int nodeCount, Timing timing, Path logDir) {
		this.contender = contender;
		this.groups = groups;
		this.nodeCount = nodeCount;
		this.timing = timing;
		this.logDir = logDir;
	}

	Map<String, Object> run() throws Exception {
		StoreAdmin.reset(this.contender);
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("contender", this.contender.id());
		result.put("label", this.contender.label());
		result.put("groups", this.groups);
		result.put("nodes", this.nodeCount);
		result.put("timing", this.timing.toString());
		result.put("stablePeriods", STABLE_PERIODS);
		List<NodeProcess> nodes = new ArrayList<>();
		List<Map<String, Object>> joins = new ArrayList<>();
		result.put("joins", joins);
		long period = TimeUnit.MILLISECONDS.toNanos(this.timing.retryMs());
		try {
			for (int i = 0; i < this.nodeCount; i++) {
				NodeProcess node = NodeProcess.start(this.contender, "b" + i, this.groups, 1, this.timing, false,
						this.events, this.logDir, NodeProcess.JVM_OPTIONS, List.of("balance=1"));
				node.await("READY", 120000);
				nodes.add(node);
				this.led.put(node.id, new HashSet<>());
				drain();
				int movedBefore = this.rebalanced.size();
				long joined = System.nanoTime();
				node.send("start");
				this.live.add(node.id);
				Map<String, Object> join = new LinkedHashMap<>();
				join.put("node", node.id);
				join.put("liveNodes", this.live.size());
				long settled = settle(joined, MAX_PERIODS * period);
				join.put("allLedAndSpreadAtMost1AfterMs", (settled < 0) ? null : (settled - joined) / 1e6);
				join.put("periods", (settled < 0) ? null : (settled - joined) / (double) period);
				join.put("moved", countMoved(movedBefore));
				join.put("ledAfter", counts());
				joins.add(join);
				System.err.printf("  join %s: spread <= 1 after %s periods, %d moved, %s%n", node.id,
						join.get("periods"), join.get("moved"), counts());
			}
			// kill -9 the first node
			NodeProcess victim = nodes.get(0);
			drain();
			int movedBefore = this.rebalanced.size();
			Map<String, Object> kill = new LinkedHashMap<>();
			kill.put("node", victim.id);
			kill.put("itLed", this.led.get(victim.id).size());
			long killed = System.nanoTime();
			victim.kill();
			this.live.remove(victim.id);
			this.led.get(victim.id).clear();
			long allLed = awaitAllLed(killed, 3 * this.timing.leaseMs() * 1_000_000L);
			kill.put("allLedAgainAfterMs", (allLed < 0) ? null : (allLed - killed) / 1e6);
			kill.put("boundMs", this.timing.leaseMs() + this.timing.retryMs());
			long settled = settle(killed, MAX_PERIODS * period + 3 * this.timing.leaseMs() * 1_000_000L);
			kill.put("spreadAtMost1AfterKillMs", (settled < 0) ? null : (settled - killed) / 1e6);
			kill.put("periodsAfterAllLed",
					(settled < 0 || allLed < 0) ? null : Math.max(0, settled - allLed) / (double) period);
			kill.put("periodsAfterKill", (settled < 0) ? null : (settled - killed) / (double) period);
			kill.put("moved", countMoved(movedBefore));
			kill.put("ledAfter", counts());
			result.put("kill", kill);
			System.err.printf("  kill %s: all led again after %s ms, spread <= 1 %s periods later, %d moved, %s%n",
					victim.id, kill.get("allLedAgainAfterMs"), kill.get("periodsAfterAllLed"), kill.get("moved"),
					counts());
			List<Map<String, Object>> stats = new ArrayList<>();
			for (NodeProcess node : nodes) {
				if (this.live.contains(node.id)) {
					Map<String, String> s = node.stats(false);
					Map<String, Object> row = new LinkedHashMap<>();
					row.put("node", node.id);
					row.put("led", s.get("led"));
					row.put("storeCalls", s.get("storeCalls"));
					row.put("leadersByCandidate", s.get("view"));
					stats.add(row);
				}
			}
			result.put("nodesAtEnd", stats);
		}
		finally {
			for (NodeProcess node : nodes) {
				node.stop(30000);
			}
			result.put("timeline", this.timeline);
		}
		return result;
	}

	/**
	 * Follows the nodes' lines until every group is led and the spread is at most 1, and
	 * stays so for {@link #STABLE_PERIODS} retry periods.
	 * @return when it became so for good, on the nodes' clock, or -1 if not within the
	 * time given
	 */
	private long settle(long since, long maxNanos) throws InterruptedException {
		long stableFor = STABLE_PERIODS * TimeUnit.MILLISECONDS.toNanos(this.timing.retryMs());
		long deadline = since + maxNanos;
		// Already so: since the last line that changed who leads what.
		long settledAt = balanced() ? Math.max(since, this.lastEventNanos) : -1;
		while (true) {
			long now = System.nanoTime();
			if (settledAt >= 0 && now - settledAt >= stableFor) {
				return settledAt;
			}
			if (now - deadline >= 0) {
				return -1;
			}
			long wait = (settledAt >= 0) ? Math.min(deadline, settledAt + stableFor) - now : deadline - now;
			NodeProcess.Event event = this.events.poll(Math.max(1, wait), TimeUnit.NANOSECONDS);
			if (event == null) {
				continue;
			}
			apply(event);
			boolean balanced = balanced();
			if (!balanced) {
				settledAt = -1;
			}
			else if (settledAt < 0) {
				settledAt = Math.max(since, event.nanos());
			}
		}
	}

	private long awaitAllLed(long since, long maxNanos) throws InterruptedException {
		long deadline = since + maxNanos;
		while (ledGroups() < this.groups) {
			NodeProcess.Event event = this.events.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
			if (event == null) {
				return -1;
			}
			apply(event);
			if (ledGroups() == this.groups) {
				return event.nanos();
			}
		}
		return since;
	}

	private void drain() {
		NodeProcess.Event event;
		while ((event = this.events.poll()) != null) {
			apply(event);
		}
	}

	private void apply(NodeProcess.Event event) {
		String node = event.node().id;
		if (!this.live.contains(node)) {
			return; // a killed node's last lines
		}
		Set<String> mine = this.led.get(node);
		if (event.type().equals("G")) {
			mine.add(event.group());
		}
		else if (event.type().equals("R")) {
			mine.remove(event.group());
			if (event.line().endsWith(" REBALANCED")) {
				this.rebalanced.add(new long[] { event.nanos() });
			}
		}
		else {
			return;
		}
		this.lastEventNanos = event.nanos();
		this.timeline.add(String.format("%d %s %s %s", event.nanos(), node, event.type(), event.group()));
	}

	private int countMoved(int before) {
		return this.rebalanced.size() - before;
	}

	private int ledGroups() {
		Set<String> all = new HashSet<>();
		for (String node : this.live) {
			all.addAll(this.led.get(node));
		}
		return all.size();
	}

	private boolean balanced() {
		if (ledGroups() < this.groups) {
			return false;
		}
		int max = Integer.MIN_VALUE;
		int min = Integer.MAX_VALUE;
		for (String node : this.live) {
			int n = this.led.get(node).size();
			max = Math.max(max, n);
			min = Math.min(min, n);
		}
		return max - min <= 1;
	}

	private Map<String, Integer> counts() {
		Map<String, Integer> counts = new TreeMap<>();
		for (String node : this.live) {
			counts.put(node, this.led.get(node).size());
		}
		return counts;
	}

	static Map<String, Object> run(Contender contender, int groups, int nodes, Timing timing, Path logDir)
			throws Exception {
		return new Balance(contender, groups, nodes, timing, logDir).run();
	}

}
