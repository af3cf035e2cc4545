package io.github.leaderelection.autoconfigure;

import java.time.Duration;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.engine.LeaderElectionEngine;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Balancing and partitioned groups, as {@link LeaderElectionAutoConfiguration} sets them
 * up from {@code leader-election.balance.*} and {@code leader-election.partitions.*}.
 */
class BalanceAndPartitionsAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class))
		.withPropertyValues("leader-election.backend=in-memory", "leader-election.lease-duration=3s",
				"leader-election.renew-deadline=2s", "leader-election.retry-period=200ms");

	@Test
	void balancingIsOffByDefault() {
		this.contextRunner.run((context) -> {
			LeaderElectionEngine engine = context.getBean(LeaderElectionEngine.class);
			assertThat(engine.isBalancing()).isFalse();
			assertThat(engine.leadersByCandidate()).isEmpty();
		});
	}

	@Test
	void balancesWhenEnabledAndCountsTheLeadersByCandidate() {
		this.contextRunner
			.withPropertyValues("leader-election.balance.enabled=true", "leader-election.balance.weight=2",
					"leader-election.candidate-id=node-1", "leader-election.partitions.orders=8")
			.run((context) -> {
				LeaderElectionEngine engine = context.getBean(LeaderElectionEngine.class);
				assertThat(engine.isBalancing()).isTrue();
				engine.start(); // as the application's ready event would
				await().atMost(Duration.ofSeconds(30))
					.untilAsserted(() -> assertThat(engine.leadersByCandidate()).containsEntry("node-1", 9));
			});
	}

	@Test
	void joinsEveryPartitionOfAPartitionedGroupAndReportsWhichItOwns() {
		this.contextRunner.withPropertyValues("leader-election.partitions.orders=4", "leader-election.group=billing")
			.run((context) -> {
				LeaderElectionEngine engine = context.getBean(LeaderElectionEngine.class);
				assertThat(engine.elections()).extracting(LeaderElection::group)
					.containsExactlyInAnyOrder("billing", "orders/0", "orders/1", "orders/2", "orders/3");
				engine.start(); // as the application's ready event would
				await().atMost(Duration.ofSeconds(30))
					.untilAsserted(() -> assertThat(engine.ownedPartitions("orders")).containsOnlyKeys(0, 1, 2, 3));
			});
	}

	@Test
	void refusesAnInvalidWeightOrPartitionCountWithTheProperty() {
		this.contextRunner
			.withPropertyValues("leader-election.balance.enabled=true", "leader-election.balance.weight=0")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("balance weight must be at least 1"));
		this.contextRunner
			.withPropertyValues("leader-election.balance.enabled=true", "leader-election.balance.weight=0")
			.run((context) -> assertThat(context).getFailure()
				.hasMessageContaining("for leader-election.balance")
				.hasMessageContaining("weight 0"));
		this.contextRunner.withPropertyValues("leader-election.partitions.orders=0")
			.run((context) -> assertThat(context).getFailure()
				.hasMessageContaining("for leader-election.partitions.orders")
				.hasMessageContaining("at least 1 partition"));
	}

}
