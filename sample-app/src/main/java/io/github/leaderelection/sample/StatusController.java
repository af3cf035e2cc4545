package io.github.leaderelection.sample;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.scheduling.ScheduledJob;
import io.github.leaderelection.scheduling.ScheduledJobs;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /} tells which instance this is, who leads, the last runs of the leader-only
 * job with their terms and instances, and the scheduled leader-only methods with their
 * last run, catch-ups and skips, to watch a failover from a browser.
 */
@RestController
public class StatusController {

	private final LeaderElection election;

	private final JobRunLog runs;

	private final ObjectProvider<ScheduledJobs> jobs;

	public StatusController(LeaderElection election, JobRunLog runs, ObjectProvider<ScheduledJobs> jobs) {
		this.election = election;
		this.runs = runs;
		this.jobs = jobs;
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
		ScheduledJobs scheduled = this.jobs.getIfAvailable();
		if (scheduled != null) {
			status.put("jobs", scheduled.jobs().stream().map(StatusController::describe).toList());
		}
		return status;
	}

	/**
	 * A scheduled leader-only method: its last run in the group, by whichever instance,
	 * and what this instance caught up or skipped.
	 */
	private static Map<String, Object> describe(ScheduledJob job) {
		Map<String, Object> described = new LinkedHashMap<>();
		described.put("job", job.job().name());
		described.put("schedule", job.job().schedule().toString());
		try {
			job.job().lastRun().ifPresent((run) -> {
				Map<String, Object> last = new LinkedHashMap<>();
				last.put("tick", Instant.ofEpochMilli(run.tick()).toString());
				last.put("candidateId", run.holder());
				last.put("term", run.term());
				last.put("outcome", run.outcome().name());
				described.put("lastRun", last);
			});
		}
		catch (RuntimeException ex) {
			described.put("lastRunError", ex.getMessage());
		}
		described.put("caughtUp", job.stats().caughtUp());
		described.put("skippedAsAlreadyRun", job.stats().skippedAsAlreadyRun());
		described.put("missedSkipped", job.stats().missedSkipped());
		job.nextTick().ifPresent((next) -> described.put("nextTick", next.toString()));
		return described;
	}

}
