package io.github.leaderelection.autoconfigure;

import java.time.Duration;
import java.util.Map;

import io.github.leaderelection.testing.ApplicationReady;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.actuate.LeaderElectionHealthIndicator;
import io.github.leaderelection.actuate.OutageLeaseStore;
import io.github.leaderelection.test.LeaderElectionTestSupport;
import io.github.leaderelection.test.LeaderElectionTestSupportAutoConfiguration;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link LeaderElectionHealthContributorAutoConfiguration} and the health it
 * reports.
 */
class LeaderElectionHealthContributorAutoConfigurationTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class,
				LeaderElectionHealthContributorAutoConfiguration.class,
				LeaderElectionTestSupportAutoConfiguration.class))
		.withPropertyValues("leader-election.backend=in-memory", "leader-election.group=orders",
				"leader-election.lease-duration=3s", "leader-election.renew-deadline=2s",
				"leader-election.retry-period=500ms");

	@Test
	void registersHealthIndicatorNamedLeaderElection() {
		this.contextRunner.run((context) -> assertThat(context).hasSingleBean(LeaderElectionHealthIndicator.class)
			.hasBean("leaderElectionHealthIndicator"));
	}

	@Test
	void backsOffWhenHealthIndicatorIsDisabled() {
		this.contextRunner.withPropertyValues("management.health.leader-election.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(LeaderElectionHealthIndicator.class));
	}

	@Test
	void backsOffWhenLeaderElectionIsDisabled() {
		this.contextRunner.withPropertyValues("leader-election.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(LeaderElectionHealthIndicator.class));
	}

	@Test
	void isUpWithDetailsForTheLeader() {
		this.contextRunner.run((context) -> {
			ApplicationReady.publish(context);
			long term = context.getBean(LeaderElectionTestSupport.class).becomeLeader().term();
			Health health = context.getBean(LeaderElectionHealthIndicator.class).health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			String candidateId = context.getBean(LeaderElection.class).candidateId();
			assertThat(health.getDetails()).containsEntry("candidateId", candidateId);
			Map<String, Object> orders = group(health, "orders");
			assertThat(orders).containsEntry("role", "LEADER")
				.containsEntry("leader", candidateId)
				.containsEntry("term", term)
				.containsEntry("backend", "in-memory")
				.containsEntry("consecutiveFailures", 0)
				.containsEntry("storeReachable", true)
				.containsKey("leaseRemaining");
		});
	}

	@Test
	void isUpForAFollower() {
		this.contextRunner.run((context) -> {
			ApplicationReady.publish(context);
			context.getBean(LeaderElectionTestSupport.class).becomeFollower();
			Health health = context.getBean(LeaderElectionHealthIndicator.class).health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(group(health, "orders")).containsEntry("role", "FOLLOWER")
				.containsEntry("leader", LeaderElectionTestSupport.OTHER_CANDIDATE)
				.doesNotContainKey("leaseRemaining");
		});
	}

	@Test
	void isDownOnlyOnceTheStoreIsUnreachablePastTheRenewDeadline() {
		this.contextRunner.withBean(OutageLeaseStore.class, OutageLeaseStore::new).run((context) -> {
			ApplicationReady.publish(context);
			LeaderElection election = context.getBean(LeaderElection.class);
			LeaderElectionHealthIndicator indicator = context.getBean(LeaderElectionHealthIndicator.class);
			await().atMost(TIMEOUT).until(election::isLeader);
			OutageLeaseStore store = context.getBean(OutageLeaseStore.class);
			store.cutOff();
			await().atMost(TIMEOUT).until(() -> indicator.health().getStatus().equals(Status.DOWN));
			assertThat(group(indicator.health(), "orders")).containsEntry("storeReachable", false)
				.containsEntry("backend", "outage-test");
			store.restore();
			await().atMost(TIMEOUT).until(() -> indicator.health().getStatus().equals(Status.UP));
		});
	}

	@Test
	void staysUpThroughAStoreOutageShorterThanTheRenewDeadline() {
		this.contextRunner.withBean(OutageLeaseStore.class, OutageLeaseStore::new)
			.withPropertyValues("leader-election.lease-duration=12s", "leader-election.renew-deadline=8s",
					"leader-election.retry-period=500ms")
			.run((context) -> {
				ApplicationReady.publish(context);
				LeaderElectionHealthIndicator indicator = context.getBean(LeaderElectionHealthIndicator.class);
				await().atMost(TIMEOUT).until(context.getBean(LeaderElection.class)::isLeader);
				OutageLeaseStore store = context.getBean(OutageLeaseStore.class);
				store.cutOff();
				await().atMost(TIMEOUT)
					.until(() -> (int) group(indicator.health(), "orders").get("consecutiveFailures") > 1);
				Health health = indicator.health();
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				assertThat(group(health, "orders")).containsEntry("role", "LEADER")
					.containsEntry("storeReachable", true);
				store.restore();
				await().atMost(TIMEOUT)
					.until(() -> (int) group(indicator.health(), "orders").get("consecutiveFailures") == 0);
			});
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> group(Health health, String group) {
		Map<String, Object> groups = (Map<String, Object>) health.getDetails().get("groups");
		return (Map<String, Object>) groups.get(group);
	}

}
