package io.github.leaderelection.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.OnlyOnLeader;
import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.RunRecords;
import io.github.leaderelection.actuate.LeaderElectionEndpoint.GroupDescriptor;
import io.github.leaderelection.autoconfigure.LeaderElectionAutoConfiguration;
import io.github.leaderelection.autoconfigure.LeaderElectionEndpointAutoConfiguration;
import io.github.leaderelection.testing.ApplicationReady;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code leaderelection} endpoint lists each group's scheduled leader-only methods,
 * with their last run as the store records it.
 */
class LeaderElectionEndpointJobsTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class,
				LeaderElectionEndpointAutoConfiguration.class, TaskSchedulingAutoConfiguration.class))
		.withUserConfiguration(Jobs.class)
		.withPropertyValues("management.endpoints.web.exposure.include=leaderelection",
				"leader-election.backend=in-memory", "leader-election.group=reports",
				"leader-election.lease-duration=3s", "leader-election.renew-deadline=2s",
				"leader-election.retry-period=500ms");

	@Test
	void listsEachScheduledLeaderOnlyMethodWithItsLastRun() {
		this.runner.run((context) -> {
			ApplicationReady.publish(context);
			LeaderElectionEndpoint endpoint = context.getBean(LeaderElectionEndpoint.class);
			await().atMost(WAIT).until(() -> {
				List<JobsView.JobDescriptor> jobs = endpoint.groups().groups().get("reports").jobs();
				return jobs.size() == 1 && jobs.get(0).lastRun() != null
						&& jobs.get(0).lastRun().outcome().equals("SUCCEEDED");
			});
			JobsView.JobDescriptor job = endpoint.group("reports").jobs().get(0);
			assertThat(job.job()).isEqualTo("report.tick");
			assertThat(job.method()).isEqualTo("Report.tick()");
			assertThat(job.schedule()).isEqualTo("cron * * * * * *");
			assertThat(job.missedTicks()).isEqualTo("run once");
			assertThat(job.lastRun().holder()).isEqualTo(endpoint.group("reports").candidateId());
			assertThat(job.lastRun().duration()).isNotNull();
			assertThat(job.runs().get("succeeded")).isPositive();
			assertThat(job.nextTick()).isNotNull();
			assertThat(job.lastRunError()).isNull();
		});
	}

	@Test
	void listsTheRunsRecordedUnderANameNoMethodOfThisInstanceHas() {
		this.runner.run((context) -> {
			ApplicationReady.publish(context);
			LeaderElectionEndpoint endpoint = context.getBean(LeaderElectionEndpoint.class);
			LeaderElection election = context.getBean(LeaderElectionRegistry.class).find("reports").orElseThrow();
			await().atMost(WAIT).until(election::isLeader);
			RunRecords runs = election.runRecords().orElseThrow();
			// A method renamed since: its last run stays in the store.
			RunRecord old = runs.claim("report.oldName", 1_000L, Instant.ofEpochMilli(1_000L), Duration.ZERO)
				.orElseThrow();
			runs.finish(old, RunOutcome.SUCCEEDED, Instant.ofEpochMilli(2_000L));
			GroupDescriptor group = endpoint.group("reports");
			assertThat(group.otherJobs()).singleElement().satisfies((other) -> {
				assertThat(other.job()).isEqualTo("report.oldName");
				assertThat(other.lastRun().outcome()).isEqualTo("SUCCEEDED");
				assertThat(other.lastRun().duration()).isEqualTo("PT1S");
			});
			assertThat(group.jobs()).extracting(JobsView.JobDescriptor::job).containsExactly("report.tick");
		});
	}

	@Test
	void aGroupWithoutScheduledLeaderOnlyMethodsListsNone() {
		this.runner.withPropertyValues("leader-election.jobs.run-records=false").run((context) -> {
			assertThat(context.getBean(LeaderElectionEndpoint.class).group("reports").jobs()).isEmpty();
		});
	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	static class Jobs {

		@Bean
		Report report() {
			return new Report();
		}

	}

	public static class Report {

		@OnlyOnLeader
		@Scheduled(cron = "* * * * * *")
		public void tick() {
		}

	}

}
