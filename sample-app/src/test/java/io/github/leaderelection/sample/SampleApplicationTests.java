package io.github.leaderelection.sample;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.leaderelection.LeaderElection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

@ExtendWith(OutputCaptureExtension.class)
@SpringBootTest(properties = { "spring.datasource.url=jdbc:h2:mem:sample-test;DB_CLOSE_DELAY=-1",
		"leader-election.jdbc.allow-in-memory-database=true", "leader-election.lease-duration=3s",
		"leader-election.renew-deadline=2s", "leader-election.retry-period=500ms", "sample.job-interval=200ms",
		"sample.report-cron=* * * * * *" })
class SampleApplicationTests {

	@Autowired
	private LeaderElection election;

	@Autowired
	private JdbcTemplate jdbc;

	@Autowired
	private StatusController status;

	@Test
	void theOnlyInstanceLeadsAndItsJobWritesFencedRuns() {
		await().atMost(Duration.ofSeconds(20)).until(this.election::isLeader);
		long term = this.election.leadership().orElseThrow().term();
		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.jdbc.queryForObject("SELECT COUNT(*) FROM sample_job_run WHERE term = ?", Integer.class,
					term) >= 3);
		List<Map<String, Object>> runs = this.jdbc.queryForList("SELECT DISTINCT candidate_id FROM sample_job_run");
		assertThat(runs).hasSize(1);
		assertThat(runs.get(0).get("CANDIDATE_ID")).isEqualTo(this.election.candidateId());
		assertThat(this.status.status()).containsEntry("leader", true).containsEntry("term", term);
	}

	@Test
	@SuppressWarnings("unchecked")
	void theStatusPageListsTheLastRunsWithTheirTermsAndInstances() {
		await().atMost(Duration.ofSeconds(20)).until(this.election::isLeader);
		long term = this.election.leadership().orElseThrow().term();
		await().atMost(Duration.ofSeconds(20))
			.until(() -> ((List<Object>) this.status.status().get("lastRuns")).size() >= 3);
		List<Map<String, Object>> lastRuns = (List<Map<String, Object>>) this.status.status().get("lastRuns");
		assertThat(lastRuns).hasSizeBetween(3, 5);
		assertThat(lastRuns.get(0)).containsEntry("term", term)
			.containsEntry("candidateId", this.election.candidateId())
			.containsKey("ranAt");
	}

	@Test
	@SuppressWarnings("unchecked")
	void theStatusPageShowsTheCronJobsLastRunInTheStore(CapturedOutput output) {
		await().atMost(Duration.ofSeconds(20)).until(this.election::isLeader);
		await().atMost(Duration.ofSeconds(20)).until(() -> reportJob().containsKey("lastRun"));
		Map<String, Object> report = reportJob();
		assertThat(report).containsEntry("schedule", "cron * * * * * *")
			.containsKeys("caughtUp", "skippedAsAlreadyRun", "missedSkipped", "nextTick");
		assertThat((Map<String, Object>) report.get("lastRun"))
			.containsEntry("candidateId", this.election.candidateId())
			.containsKeys("tick", "term", "outcome");
		await().atMost(Duration.ofSeconds(20))
			.until(() -> output.getOut().contains("Report ran as " + this.election.candidateId()));
	}

	@SuppressWarnings("unchecked")
	private Map<String, Object> reportJob() {
		List<Map<String, Object>> jobs = (List<Map<String, Object>>) this.status.status().get("jobs");
		return jobs.stream().filter((job) -> "reportJob.report".equals(job.get("job"))).findFirst().orElseThrow();
	}

	@Test
	void theLeadersWorkIsVisibleAtInfo(CapturedOutput output) {
		await().atMost(Duration.ofSeconds(20)).until(this.election::isLeader);
		long term = this.election.leadership().orElseThrow().term();
		await().atMost(Duration.ofSeconds(20))
			.until(() -> output.getOut().contains("INFO") && output.getOut()
				.contains("Leader-only job ran as " + this.election.candidateId() + " in term " + term));
	}

	@Test
	void aWriteWithAStaleTermIsRefused(@Autowired JobRunLog log) {
		await().atMost(Duration.ofSeconds(20)).until(this.election::isLeader);
		long term = this.election.leadership().orElseThrow().term();
		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.jdbc.queryForObject("SELECT COUNT(*) FROM sample_job_run WHERE term = ?", Integer.class,
					term) >= 1);
		io.github.leaderelection.Leadership stale = new io.github.leaderelection.Leadership(this.election.group(),
				"stale-instance", term - 1, (t) -> true);
		assertThat(log.record(stale)).isFalse();
		assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM sample_job_run WHERE candidate_id = 'stale-instance'",
				Integer.class))
			.isZero();
	}

}
