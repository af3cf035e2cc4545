package io.github.leaderelection.zookeeper;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.spi.Lease;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.Stat;

/**
 * The run records of a ZooKeeper store: one persistent node per group and job
 * ({@link GroupPaths#run}), whose data is the job's last run. A claim is one
 * multi-operation that holds the checks of a renewal (the holder's queue node exists, the
 * group node has the lease's version) and writes the run node on the version it read, so
 * it commits only while the lease is held and nobody else wrote the run since.
 *
 * <p>
 * A group's runs are listed from the children of {@link GroupPaths#runs}, then the data
 * of all of them with read-only multi-operations sent at once: one round trip for the
 * children and one for the data, however many jobs.
 */
final class RunNodes {

	/**
	 * The most that the answer to reading one run may take: the run's fields, a holder of
	 * up to 255 characters of three UTF-8 bytes each, the stat and the result's header.
	 */
	private static final int RUN_BYTES = 1024;

	private final CuratorCalls zookeeper;

	private final GroupPaths paths;

	RunNodes(CuratorCalls zookeeper, GroupPaths paths) {
		this.zookeeper = zookeeper;
		this.paths = paths;
	}

	Optional<RunRecord> read(String group, String job, long deadline) throws Exception {
		return read(group, job, new Stat(), deadline);
	}

	/**
	 * Reads the run of every job of the group.
	 * @return the runs in job-name order
	 */
	List<RunRecord> list(String group, long deadline) throws Exception {
		String parent = this.paths.runs(group);
		CuratorEvent children = this.zookeeper.getChildren(parent, deadline);
		if (!CuratorCalls.isOk(children)) {
			return List.of();
		}
		// By job name: the nodes' order (encoded, as the server lists them) is not the
		// names'. A node that no job name encodes to is not this store's.
		SortedMap<String, String> jobs = new TreeMap<>();
		for (String child : children.getChildren()) {
			String job = GroupPaths.decode(child);
			if (job != null) {
				jobs.put(job, parent + "/" + child);
			}
		}
		List<Op> reads = new ArrayList<>(jobs.size());
		int longestPath = 0;
		for (String path : jobs.values()) {
			reads.add(this.zookeeper.readData(path));
			longestPath = Math.max(longestPath, path.length());
		}
		// Within half a packet both ways: a request holds the paths, an answer the runs.
		int perRequest = Math.max(1, this.zookeeper.batchBytes() / (RUN_BYTES + longestPath));
		List<OpResult> results = this.zookeeper.read(reads, perRequest, deadline);
		List<RunRecord> runs = new ArrayList<>(jobs.size());
		int index = 0;
		for (String job : jobs.keySet()) {
			// A node deleted since the children were read is a job without a run.
			if (results.get(index++) instanceof OpResult.GetDataResult data) {
				runs.add(parse(group, job, data.getData()));
			}
		}
		return runs;
	}

	/**
	 * Claims the run for the member that holds the lease: call under the member's lock,
	 * once it was found to hold the lease's term on a node of the current session.
	 */
	boolean claim(String node, Lease lease, RunRecord run, Duration minInterval, long deadline) throws Exception {
		Stat stat = new Stat();
		Optional<RunRecord> last = read(run.group(), run.job(), stat, deadline);
		if (!run.mayFollow(last.orElse(null), minInterval)) {
			return false;
		}
		String path = this.paths.run(run.group(), run.job());
		CuratorOp write;
		if (last.isPresent()) {
			write = this.zookeeper.setData(path, stat.getVersion(), bytes(run));
		}
		else {
			// The parents once, outside the claim: creating them twice is harmless.
			this.zookeeper.createNode(path.substring(0, path.lastIndexOf('/')), new byte[0], CreateMode.PERSISTENT,
					deadline);
			write = this.zookeeper.create(path, bytes(run), CreateMode.PERSISTENT);
		}
		CuratorEvent result = this.zookeeper.transaction(deadline,
				this.zookeeper.check(this.paths.node(lease.group(), node)),
				this.zookeeper.check(this.paths.group(lease.group()), ZookeeperLeaseStore.version(lease)), write);
		return CuratorCalls.isOk(result);
	}

	/** Writes the end of the run, if the job's record is still of that run. */
	boolean finish(RunRecord ended, long deadline) throws Exception {
		Objects.requireNonNull(ended.ended(), "ended");
		Stat stat = new Stat();
		Optional<RunRecord> last = read(ended.group(), ended.job(), stat, deadline);
		if (last.isEmpty() || !last.get().isSameRunAs(ended)) {
			return false;
		}
		CuratorEvent result = this.zookeeper.transaction(deadline,
				this.zookeeper.setData(this.paths.run(ended.group(), ended.job()), stat.getVersion(), bytes(ended)));
		return CuratorCalls.isOk(result);
	}

	private Optional<RunRecord> read(String group, String job, Stat stat, long deadline) throws Exception {
		CuratorEvent data = this.zookeeper.getData(this.paths.run(group, job), deadline);
		if (!CuratorCalls.isOk(data)) {
			return Optional.empty();
		}
		stat.setVersion(data.getStat().getVersion());
		return Optional.of(parse(group, job, data.getData()));
	}

	/**
	 * The run as lines: tick, term, started, ended (empty while it runs), outcome, and
	 * the holder last, whose id holds no line break.
	 */
	private static byte[] bytes(RunRecord run) {
		String ended = (run.ended() != null) ? Long.toString(run.ended().toEpochMilli()) : "";
		return String
			.join("\n", Long.toString(run.tick()), Long.toString(run.term()),
					Long.toString(run.started().toEpochMilli()), ended, run.outcome().name(), run.holder())
			.getBytes(StandardCharsets.UTF_8);
	}

	private static RunRecord parse(String group, String job, byte[] data) {
		String[] lines = new String(data, StandardCharsets.UTF_8).split("\n", 6);
		Instant ended = lines[3].isEmpty() ? null : Instant.ofEpochMilli(Long.parseLong(lines[3]));
		return new RunRecord(group, job, Long.parseLong(lines[0]), lines[5], Long.parseLong(lines[1]),
				Instant.ofEpochMilli(Long.parseLong(lines[2])), ended, RunOutcome.valueOf(lines[4]));
	}

}
