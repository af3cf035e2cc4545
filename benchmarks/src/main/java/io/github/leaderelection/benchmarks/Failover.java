package io.github.leaderelection.benchmarks;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Figure 2: time from the leader's {@code kill -9} to the next grant, and from the start
 * of a graceful stop to the next grant, with one leader and one follower, each in a JVM
 * of its own. After each trial the follower leads and a fresh follower is started.
 */
final class Failover {

	private final Contender contender;

	private final Timing timing;

	private final Path logDir;

	private int nodes;

	private NodeProcess leader;

	private NodeProcess follower;

	Failover(Contender contender, Timing timing, Path logDir) {
		this.contender = contender;
		this.timing = timing;
		this.logDir = logDir;
	}

	Map<String, Object> run(int trials) throws Exception {
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("contender", this.contender.id());
		result.put("label", this.contender.label());
		result.put("timing", this.timing.toString());
		try {
			StoreAdmin.reset(this.contender);
			startPair();
			result.put("crash", trials(trials, true));
			result.put("graceful", trials(trials, false));
		}
		finally {
			closeAll();
		}
		return result;
	}

	private Map<String, Object> trials(int trials, boolean crash) throws Exception {
		List<Double> samples = new ArrayList<>();
		List<String> failures = new ArrayList<>();
		List<Double> leaderStops = new ArrayList<>();
		for (int i = 0; i < trials; i++) {
			try {
				samples.add(crash ? crashOnce() : stopOnce(leaderStops));
				this.leader = this.follower;
				this.follower = startFollower();
			}
			catch (IllegalStateException ex) {
				failures.add(ex.getMessage());
				System.err.println("  trial failed: " + ex.getMessage());
				closeAll();
				StoreAdmin.reset(this.contender);
				startPair();
			}
		}
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("trials", samples.size());
		result.put("p50Ms", Stats.percentile(samples, 50));
		result.put("p99Ms", Stats.percentile(samples, 99));
		result.put("maxMs", Stats.max(samples));
		result.put("samplesMs", samples);
		result.put("failures", failures);
		if (!crash) {
			// From the start of the stop until the leader's election has stopped and
			// released the lease.
			result.put("leaderStopP50Ms", Stats.percentile(leaderStops, 50));
			result.put("leaderStopSamplesMs", leaderStops);
		}
		System.err.printf("  %s %s: p50 %.0f ms, p99 %.0f ms, max %.0f ms (%d trials, %d failed)%n",
				this.contender.id(), crash ? "crash" : "graceful", Stats.percentile(samples, 50),
				Stats.percentile(samples, 99), Stats.max(samples), samples.size(), failures.size());
		return result;
	}

	private double crashOnce() throws Exception {
		long killed = System.nanoTime();
		this.leader.kill();
		NodeProcess.Event granted = this.follower.await("G", 3 * this.timing.leaseMs() + 10000);
		this.leader.awaitExit(5000);
		if (granted.nanos() < killed) {
			throw new IllegalStateException("The follower was granted before the kill");
		}
		return (granted.nanos() - killed) / 1e6;
	}

	private double stopOnce(List<Double> leaderStops) throws Exception {
		this.leader.send("stop");
		NodeProcess.Event stopping = this.leader.await("STOPPING", 10000);
		NodeProcess.Event released = this.leader.await("RELEASED", 30000);
		NodeProcess.Event granted = this.follower.await("G", 2 * this.timing.leaseMs() + 10000);
		this.leader.stop(15000);
		if (granted.nanos() < stopping.nanos()) {
			throw new IllegalStateException("The follower was granted before the stop");
		}
		leaderStops.add((released.nanos() - stopping.nanos()) / 1e6);
		return (granted.nanos() - stopping.nanos()) / 1e6;
	}

	private void startPair() throws Exception {
		this.leader = start();
		this.leader.await("G", 60000);
		this.follower = startFollower();
	}

	private NodeProcess startFollower() throws Exception {
		NodeProcess node = start();
		// Let it join and make its first attempts, so that it is a settled follower.
		Thread.sleep(Math.max(500, this.timing.retryMs()));
		return node;
	}

	private NodeProcess start() throws Exception {
		NodeProcess node = NodeProcess.start(this.contender, "n" + (this.nodes++), 1, 1, this.timing, true, null,
				this.logDir, NodeProcess.FAILOVER_JVM_OPTIONS);
		node.await("READY", 60000);
		return node;
	}

	private void closeAll() throws InterruptedException {
		for (NodeProcess node : new NodeProcess[] { this.leader, this.follower }) {
			if (node != null) {
				node.close();
			}
		}
		this.leader = null;
		this.follower = null;
	}

}
