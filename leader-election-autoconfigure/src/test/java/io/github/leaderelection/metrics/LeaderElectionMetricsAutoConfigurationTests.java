package io.github.leaderelection.metrics;

import java.time.Duration;

import io.github.leaderelection.testing.ApplicationReady;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.OnlyOnLeader;
import io.github.leaderelection.actuate.OutageLeaseStore;
import io.github.leaderelection.autoconfigure.LeaderElectionAutoConfiguration;
import io.github.leaderelection.autoconfigure.LeaderElectionMetricsAutoConfiguration;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.test.LeaderElectionTestSupport;
import io.github.leaderelection.test.LeaderElectionTestSupportAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.Test;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link LeaderElectionMetricsAutoConfiguration} and the meters it records.
 */
class LeaderElectionMetricsAutoConfigurationTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class,
				LeaderElectionMetricsAutoConfiguration.class, LeaderElectionTestSupportAutoConfiguration.class))
		.withPropertyValues("leader-election.backend=in-memory", "leader-election.group=orders",
				"leader-election.lease-duration=3s", "leader-election.renew-deadline=2s",
				"leader-election.retry-period=500ms");

	private final ApplicationContextRunner metricsContextRunner = this.contextRunner
		.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
				SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class));

	@Test
	void countsTheRunsOfScheduledLeaderOnlyMethodsThroughTheTimedStore() {
		this.metricsContextRunner.withConfiguration(AutoConfigurations.of(TaskSchedulingAutoConfiguration.class))
			.withUserConfiguration(EverySecondJob.class)
			.run((context) -> {
				ApplicationReady.publish(context);
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				await().atMost(TIMEOUT)
					.until(() -> meters.get(LeaderOnlyJobMetrics.RUNS)
						.tags("group", "orders", "job", "everySecondJob.tick", "outcome", "succeeded")
						.functionCounter()
						.count() >= 2);
				assertThat(meters.get(LeaderOnlyJobMetrics.CLAIMS).functionTimer().count()).isGreaterThanOrEqualTo(2);
				assertThat(meters.get(LeaderOnlyJobMetrics.SKIPPED)
					.tag("reason", "claim-failed")
					.functionCounter()
					.count()).isZero();
				assertThat(meters.get(LeaderOnlyJobMetrics.CAUGHT_UP).functionCounter().count()).isZero();
			});
	}

	@Test
	void backsOffWithoutMeterRegistry() {
		this.contextRunner.run((context) -> {
			assertThat(context).doesNotHaveBean(LeaderElectionMetrics.class)
				.doesNotHaveBean(TimedLeaseStorePostProcessor.class);
			assertThat(AopUtils.isAopProxy(context.getBean(LeaseStore.class))).isFalse();
		});
	}

	@Test
	void timesTheStoreWithoutChangingItsType() {
		this.metricsContextRunner.run((context) -> {
			assertThat(context).hasSingleBean(LeaderElectionMetrics.class).hasSingleBean(InMemoryLeaseStore.class);
			InMemoryLeaseStore store = context.getBean(InMemoryLeaseStore.class);
			assertThat(AopUtils.isAopProxy(store)).isTrue();
			assertThat(context.getBean(LeaderElectionEngine.class).store()).isSameAs(store);
			assertThat(store.backend()).isEqualTo("in-memory");
		});
	}

	@Test
	void recordsTheSpreadWhileBalancingAndTheBatchesOfTheNodesRounds() {
		// Partitions, so that the node leads several groups: a batch of one is sent as
		// the call for its group.
		this.metricsContextRunner
			.withPropertyValues("leader-election.balance.enabled=true", "leader-election.partitions.tasks=2")
			.run((context) -> {
				ApplicationReady.publish(context);
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				await().atMost(TIMEOUT)
					.untilAsserted(
							() -> assertThat(meters.get("leader.election.balance.spread").gauge().value()).isZero());
				await().atMost(TIMEOUT)
					.untilAsserted(() -> assertThat(meters.get("leader.election.store.requests")
						.tags("group", "*", "operation", "renew-all", "outcome", "success")
						.timer()
						.count()).isPositive());
			});
		this.metricsContextRunner.run((context) -> assertThat(
				context.getBean(MeterRegistry.class).find("leader.election.balance.spread").gauge())
			.isNull());
	}

	@Test
	void recordsLeadershipTermsTransitionsAndStoreRequests() {
		this.metricsContextRunner.run((context) -> {
			ApplicationReady.publish(context);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			LeaderElectionTestSupport support = context.getBean(LeaderElectionTestSupport.class);
			Leadership leadership = support.becomeLeader();
			assertThat(gauge(meters, "leader.election.leader")).isEqualTo(1);
			assertThat(gauge(meters, "leader.election.term")).isEqualTo(leadership.term());
			assertThat(meters.get("leader.election.transitions")
				.tags("group", "orders", "backend", "in-memory", "type", "granted", "reason", "elected")
				.counter()
				.count()).isEqualTo(1);
			assertThat(requests(meters, "acquire", "success").count()).isPositive();
			await().atMost(TIMEOUT).until(() -> requests(meters, "renew", "success") != null);

			support.becomeFollower();
			assertThat(gauge(meters, "leader.election.leader")).isZero();
			LeaderElection election = context.getBean(LeaderElection.class);
			assertThat(gauge(meters, "leader.election.term")).isEqualTo(election.currentLeader().orElseThrow().term());
			assertThat(meters.get("leader.election.transitions")
				.tags("group", "orders", "type", "revoked", "reason", "forced-elsewhere")
				.counter()
				.count()).isEqualTo(1);
			assertThat(requests(meters, "force", "success").count()).isPositive();
			assertThat(requests(meters, "read", "success").count()).isPositive();
		});
	}

	@Test
	void recordsRejectedAndFailedStoreRequests() {
		this.metricsContextRunner.withBean(OutageLeaseStore.class, OutageLeaseStore::new).run((context) -> {
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			LeaseStore store = context.getBean(LeaseStore.class);
			Duration timeout = Duration.ofSeconds(1);
			store.tryAcquire("billing", "someone-else", Duration.ofMinutes(1), timeout);
			assertThat(store.tryAcquire("billing", "me", Duration.ofMinutes(1), timeout)).isEmpty();
			assertThat(meters.get("leader.election.store.requests")
				.tags("group", "billing", "backend", "outage-test", "operation", "acquire", "outcome", "rejected")
				.timer()
				.count()).isEqualTo(1);
			context.getBean(OutageLeaseStore.class).cutOff();
			try {
				store.read("billing", timeout);
			}
			catch (IllegalStateException ex) {
				// expected
			}
			assertThat(meters.get("leader.election.store.requests")
				.tags("group", "billing", "operation", "read", "outcome", "failure")
				.timer()
				.count()).isEqualTo(1);
		});
	}

	private static double gauge(MeterRegistry meters, String name) {
		return meters.get(name).tags("group", "orders", "backend", "in-memory").gauge().value();
	}

	private static Timer requests(MeterRegistry meters, String operation, String outcome) {
		return meters.find("leader.election.store.requests")
			.tags("group", "orders", "backend", "in-memory", "operation", operation, "outcome", outcome)
			.timer();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	static class EverySecondJob {

		@Bean
		Job everySecondJob() {
			return new Job();
		}

	}

	public static class Job {

		@OnlyOnLeader
		@Scheduled(cron = "* * * * * *")
		public void tick() {
		}

	}

}
