package io.github.leaderelection.sample;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.leaderelection.LeaderElection;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /} tells which instance this is, who leads, and the last runs of the
 * leader-only job with their terms and instances, to watch a failover from a browser.
 */
@RestController
public class StatusController {

	private final LeaderElection election;

	private final JobRunLog runs;

	public StatusController(LeaderElection election, JobRunLog runs) {
		this.election = election;
		this.runs = runs;
	}

	@GetMapping("/")
	public Map<String, Object> status() {
		Map<String, Object> status = new LinkedHashMap<>();
		status.put("group", this.election.group());
		status.put("candidateId", this.election.candidateId());
		status.put("leader", this.election.isLeader());
		this.election.leadership().ifPresent((leadership) -> status.put("term", leadership.term()));
		this.election.currentLeader().ifPresent((leader) -> {
			status.put("currentLeader", leader.candidateId());
			status.put("currentTerm", leader.term());
		});
		status.put("lastRuns", this.runs.lastRuns(this.election.group(), 5));
		return status;
	}

}
