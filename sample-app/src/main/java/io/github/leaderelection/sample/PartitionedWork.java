package io.github.leaderelection.sample;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.Leadership;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Profile;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The {@code partitions} profile: the work split into partitions (seed 003's task table,
 * split by key), each elected as a group of its own, and balancing spreading them over
 * the instances. Every instance runs the work of the partitions it owns, fenced by each
 * partition's term, and {@code GET /partitions} shows which it owns.
 */
@RestController
@Profile("partitions")
public class PartitionedWork {

	private static final Logger logger = LoggerFactory.getLogger(PartitionedWork.class);

	private final LeaderElectionRegistry registry;

	private final String name;

	/** The partitions owned at the last run, to log a change once. */
	private Map<Integer, Long> lastOwned = Map.of();

	public PartitionedWork(LeaderElectionRegistry registry, @Value("${sample.partitioned-group}") String name) {
		this.registry = registry;
		this.name = name;
	}

	@Scheduled(fixedDelayString = "${sample.job-interval:1s}")
	public void run() {
		Map<Integer, Long> owned = terms(this.registry.ownedPartitions(this.name));
		// A real task would now take the rows of each partition it owns, writing with
		// the partition's term as the fence token, as JobRunLog does for the job.
		if (!owned.equals(this.lastOwned)) {
			logger.info("Candidate {} owns {} of the partitions of '{}': {} (partition=term)",
					this.registry.candidateId(), owned.size(), this.name, owned);
			this.lastOwned = owned;
		}
	}

	@GetMapping("/partitions")
	public Map<String, Object> partitions() {
		Map<String, Object> status = new LinkedHashMap<>();
		status.put("group", this.name);
		status.put("candidateId", this.registry.candidateId());
		status.put("owned", terms(this.registry.ownedPartitions(this.name)));
		return status;
	}

	private static Map<Integer, Long> terms(Map<Integer, Leadership> owned) {
		Map<Integer, Long> terms = new LinkedHashMap<>();
		owned.forEach((partition, leadership) -> terms.put(partition, Objects.requireNonNull(leadership).term()));
		return terms;
	}

}
