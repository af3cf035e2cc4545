package io.github.leaderelection.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.leaderelection.testing.ApplicationReady;
import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.aop.OnlyOnLeaderAdvisor;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link LeaderElectionAutoConfiguration}.
 */
@ExtendWith(OutputCaptureExtension.class)
class LeaderElectionAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class));

	@Test
	void createsEngineAndElectionOfDefaultGroupWithInMemoryBackend() {
		this.contextRunner.withPropertyValues("leader-election.backend=in-memory").run((context) -> {
			assertThat(context).hasSingleBean(LeaderElectionEngine.class)
				.hasSingleBean(LeaderElectionRegistry.class)
				.hasSingleBean(InMemoryLeaseStore.class)
				.hasSingleBean(OnlyOnLeaderAdvisor.class);
			LeaderElectionEngine engine = context.getBean(LeaderElectionEngine.class);
			assertThat(engine.store()).isSameAs(context.getBean(LeaseStore.class));
			assertThat(context.getBean(LeaderElection.class).group()).isEqualTo("default");
			assertThat(engine.find("default")).containsSame(context.getBean(LeaderElection.class));
		});
	}

	@Test
	void joinsGroupNamedAfterApplication() {
		this.contextRunner.withPropertyValues("leader-election.backend=in-memory", "spring.application.name=orders")
			.run((context) -> assertThat(context.getBean(LeaderElection.class).group()).isEqualTo("orders"));
	}

	@Test
	void joinsConfiguredGroup() {
		this.contextRunner
			.withPropertyValues("leader-election.backend=in-memory", "spring.application.name=orders",
					"leader-election.group=billing")
			.run((context) -> assertThat(context.getBean(LeaderElection.class).group()).isEqualTo("billing"));
	}

	@Test
	void appliesTimingAndCandidateId() {
		this.contextRunner
			.withPropertyValues("leader-election.backend=in-memory", "leader-election.lease-duration=30s",
					"leader-election.renew-deadline=20s", "leader-election.retry-period=5s",
					"leader-election.candidate-id=node-1")
			.run((context) -> {
				LeaderElectionEngine engine = context.getBean(LeaderElectionEngine.class);
				assertThat(engine.timing()).isEqualTo(
						new ElectionTiming(Duration.ofSeconds(30), Duration.ofSeconds(20), Duration.ofSeconds(5)));
				assertThat(engine.candidateId()).isEqualTo("node-1");
				assertThat(context.getBean(LeaderElection.class).candidateId()).isEqualTo("node-1");
			});
	}

	@Test
	void usesDefaultTimingAndCandidateIdUniqueToProcess() {
		this.contextRunner.withPropertyValues("leader-election.backend=in-memory").run((context) -> {
			LeaderElectionEngine engine = context.getBean(LeaderElectionEngine.class);
			assertThat(engine.timing()).isEqualTo(ElectionTiming.DEFAULTS);
			assertThat(engine.candidateId()).contains("-" + ProcessHandle.current().pid() + "-");
		});
	}

	@Test
	void appliesCustomizersAfterProperties() {
		this.contextRunner
			.withPropertyValues("leader-election.backend=in-memory", "leader-election.candidate-id=node-1")
			.withBean(LeaderElectionEngineCustomizer.class, () -> (builder) -> builder.candidateId("customized"))
			.run((context) -> assertThat(context.getBean(LeaderElectionEngine.class).candidateId())
				.isEqualTo("customized"));
	}

	@Test
	void backsOffWhenUserDefinesLeaseStore() {
		this.contextRunner.withUserConfiguration(UserLeaseStoreConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(LeaseStore.class);
			assertThat(context.getBean(LeaderElectionEngine.class).store()).isSameAs(context.getBean("userLeaseStore"));
		});
	}

	@Test
	void userLeaseStoreWinsOverSelectedBackend() {
		this.contextRunner.withUserConfiguration(UserLeaseStoreConfiguration.class)
			.withPropertyValues("leader-election.backend=jdbc")
			.run((context) -> assertThat(context.getBean(LeaderElectionEngine.class).store())
				.isSameAs(context.getBean("userLeaseStore")));
	}

	@Test
	void watchesBeforeLeadingWhenAsked() {
		this.contextRunner
			.withPropertyValues("leader-election.backend=in-memory", "leader-election.watch-before-leading=true",
					"leader-election.lease-duration=1500ms", "leader-election.renew-deadline=1s",
					"leader-election.retry-period=200ms")
			.run((context) -> {
				LeaderElection election = context.getBean(LeaderElection.class);
				long started = System.nanoTime();
				ApplicationReady.publish(context);
				await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10)).until(election::isLeader);
				// Alone on a store that never saw the group, it still waits out one
				// lease.
				assertThat(Duration.ofNanos(System.nanoTime() - started))
					.isGreaterThanOrEqualTo(Duration.ofMillis(1500));
			});
	}

	@Test
	void backsOffWhenUserDefinesEngine() {
		this.contextRunner.withUserConfiguration(UserEngineConfiguration.class)
			.withPropertyValues("leader-election.backend=in-memory")
			.run((context) -> {
				assertThat(context).hasSingleBean(LeaderElectionRegistry.class).doesNotHaveBean(LeaseStore.class);
				LeaderElectionEngine engine = context.getBean(LeaderElectionEngine.class);
				assertThat(engine).isSameAs(context.getBean("userEngine"));
				assertThat(context.getBean(LeaderElection.class).candidateId()).isEqualTo("user");
				ApplicationReady.publish(context);
				assertThat(engine.isRunning()).isTrue();
			});
	}

	@Test
	void backsOffWhenUserDefinesElection() {
		this.contextRunner.withPropertyValues("leader-election.backend=in-memory")
			.withUserConfiguration(UserElectionConfiguration.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(LeaderElection.class);
				assertThat(context.getBean(LeaderElection.class).group()).isEqualTo("orders");
			});
	}

	@Test
	void isDisabledByProperty() {
		this.contextRunner.withPropertyValues("leader-election.enabled=false", "leader-election.backend=in-memory")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(LeaderElectionRegistry.class)
				.doesNotHaveBean(LeaderElection.class)
				.doesNotHaveBean(LeaseStore.class)
				.doesNotHaveBean(OnlyOnLeaderAdvisor.class));
	}

	@Test
	void doesNotFallBackToInMemoryBackend() {
		this.contextRunner.run((context) -> assertThat(analyze(context).getDescription())
			.startsWith("No leader election backend fits the application"));
	}

	@Test
	void addsListenerBeansToRegistry() {
		this.contextRunner.withPropertyValues("leader-election.backend=in-memory")
			.withUserConfiguration(ListenerConfiguration.class)
			.run((context) -> {
				ApplicationReady.publish(context);
				RecordingListener listener = context.getBean(RecordingListener.class);
				await().atMost(Duration.ofSeconds(20)).until(() -> !listener.granted.isEmpty());
				assertThat(listener.granted.get(0).group()).isEqualTo("default");
			});
	}

	@Test
	void failsWithClearMessageWhenNoBackendIsDetected() {
		this.contextRunner.run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).contains("leader-election.backend is not set")
				.contains("jdbc needs a DataSource bean");
			assertThat(analysis.getAction()).contains("spring-boot-starter-jdbc")
				.contains("leader-election.backend=in-memory")
				.contains("LeaseStore bean")
				.contains("leader-election.enabled=false");
		});
	}

	@Test
	void warnsOnceThatUnnamedApplicationsShareTheDefaultGroup(CapturedOutput output) {
		this.contextRunner.withPropertyValues("leader-election.backend=in-memory").run((context) -> {
			assertThat(context.getBean(LeaderElection.class).group()).isEqualTo("default");
			assertThat(output)
				.containsOnlyOnce("Leader election joins group 'default' because neither "
						+ "leader-election.group nor spring.application.name is set")
				.contains("Set spring.application.name");
		});
	}

	@Test
	void saysNothingAboutTheGroupWhenTheApplicationHasAName(CapturedOutput output) {
		this.contextRunner.withPropertyValues("leader-election.backend=in-memory", "spring.application.name=orders")
			.run((context) -> assertThat(output).doesNotContain("Leader election joins group"));
		this.contextRunner.withPropertyValues("leader-election.backend=in-memory", "leader-election.group=billing")
			.run((context) -> assertThat(output).doesNotContain("Leader election joins group"));
	}

	@Test
	void failsWithClearMessageWhenBackendIsUnknown() {
		this.contextRunner.withPropertyValues("leader-election.backend=mongo").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).startsWith("Invalid value 'mongo' for leader-election.backend");
			assertThat(analysis.getAction())
				.isEqualTo("Set leader-election.backend to a backend on the class path (jdbc, "
						+ "redis, zookeeper, etcd, in-memory), or remove it to detect the backend from the application's beans.");
		});
	}

	@Test
	void failsWithClearMessageWhenJdbcIsSelectedWithoutDataSource() {
		this.contextRunner.withPropertyValues("leader-election.backend=jdbc").run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).isEqualTo("leader-election.backend is 'jdbc', but the application "
					+ "lacks what that backend needs: a DataSource bean, with spring-boot-jdbc on the class path.");
			assertThat(analysis.getAction()).contains("add spring-boot-starter-jdbc and set spring.datasource.url");
		});
	}

	@Test
	void failsWithClearMessageWhenLeaseDurationIsNotGreaterThanRenewDeadline() {
		this.contextRunner
			.withPropertyValues("leader-election.backend=in-memory", "leader-election.lease-duration=10s",
					"leader-election.renew-deadline=10s")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).contains("leader-election.lease-duration=10s")
					.contains("leader-election.renew-deadline=10s")
					.contains("lease-duration must be greater than renew-deadline");
				assertThat(analysis.getAction()).contains("lease-duration > renew-deadline > 1.2 x retry-period");
			});
	}

	@Test
	void failsWithClearMessageWhenRenewDeadlineIsTooCloseToRetryPeriod() {
		this.contextRunner
			.withPropertyValues("leader-election.backend=in-memory", "leader-election.renew-deadline=5s",
					"leader-election.retry-period=5s")
			.run((context) -> assertThat(analyze(context).getDescription()).contains("leader-election.retry-period=5s")
				.contains("renew-deadline must be greater than 1.2 x retry-period"));
	}

	@Test
	void failsWithClearMessageWhenRetryPeriodIsZero() {
		this.contextRunner.withPropertyValues("leader-election.backend=in-memory", "leader-election.retry-period=0s")
			.run((context) -> assertThat(analyze(context).getDescription()).contains("leader-election.retry-period=0s")
				.contains("retry-period must be positive"));
	}

	@Test
	void failsWithClearMessageWhenRetryPeriodIsBelowTheFloorThatAStoreCallNeeds() {
		this.contextRunner.withPropertyValues("leader-election.backend=in-memory", "leader-election.retry-period=1ms")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).contains("leader-election.retry-period=1ms")
					.contains("retry-period must be at least 100ms (it is also the timeout of every store call)");
				assertThat(analysis.getAction()).contains("retry-period >= 100ms");
			});
	}

	@Test
	void failsWithClearMessageWhenLeaseDurationIsNegative() {
		this.contextRunner
			.withPropertyValues("leader-election.backend=in-memory", "leader-election.lease-duration=-15s")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("leader-election.lease-duration=-15s")
				.contains("lease-duration must be positive")
				.doesNotContain("must be greater than renew-deadline"));
	}

	@Test
	void failsWithClearMessageWhenRenewDeadlineIsZero() {
		this.contextRunner.withPropertyValues("leader-election.backend=in-memory", "leader-election.renew-deadline=0s")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("renew-deadline must be positive"));
	}

	@Test
	void failsWithClearMessageWhenShutdownTimeoutIsNegative() {
		this.contextRunner
			.withPropertyValues("leader-election.backend=in-memory", "leader-election.shutdown-timeout=-1s")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription())
					.isEqualTo("Invalid value '-1s' for leader-election.shutdown-timeout: it must be positive");
				assertThat(analysis.getAction()).contains("leader-election.shutdown-timeout");
			});
	}

	@Test
	void failsWithClearMessageWhenLeaseDurationIsOutOfRange() {
		this.contextRunner
			.withPropertyValues("leader-election.backend=in-memory", "leader-election.lease-duration=300000d")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription())
					.isEqualTo("Invalid value '300000d' for leader-election.lease-duration: it must be at most 1d");
				assertThat(analysis.getAction()).startsWith("Set leader-election.lease-duration to how long the store "
						+ "keeps a lease that is not renewed, for example 15s (the default), at most 1d.");
			});
	}

	@Test
	void failsWithClearMessageWhenRenewDeadlineOrRetryPeriodIsOutOfRange() {
		this.contextRunner.withPropertyValues("leader-election.backend=in-memory", "leader-election.renew-deadline=25h")
			.run((context) -> assertThat(analyze(context).getDescription())
				.isEqualTo("Invalid value '25h' for leader-election.renew-deadline: it must be at most 1d"));
		this.contextRunner
			.withPropertyValues("leader-election.backend=in-memory", "leader-election.retry-period=106751992d")
			.run((context) -> assertThat(analyze(context).getDescription())
				.isEqualTo("Invalid value '106751992d' for leader-election.retry-period: it must be at most 1d"));
	}

	@Test
	void failsWithClearMessageWhenShutdownTimeoutIsOutOfRange() {
		this.contextRunner
			.withPropertyValues("leader-election.backend=in-memory", "leader-election.shutdown-timeout=2h")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription())
					.isEqualTo("Invalid value '2h' for leader-election.shutdown-timeout: it must be at most 1h");
				assertThat(analysis.getAction()).contains("at most 1h");
			});
	}

	@Test
	void failsWithClearMessageWhenBalanceWeightOrPartitionCountIsOutOfRange() {
		this.contextRunner
			.withPropertyValues("leader-election.backend=in-memory", "leader-election.balance.enabled=true",
					"leader-election.balance.weight=2147483647")
			.run((context) -> assertThat(analyze(context).getDescription())
				.isEqualTo("Invalid value '2147483647' for leader-election.balance.weight: it must be at most 1000"));
		this.contextRunner
			.withPropertyValues("leader-election.backend=in-memory", "leader-election.partitions.orders=2147483647")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).isEqualTo(
						"Invalid value '2147483647' for leader-election.partitions.orders: it must be at most 10000");
				assertThat(analysis.getAction()).startsWith("Set leader-election.partitions.orders to a number");
			});
	}

	@Test
	void failsWithClearMessageWhenShutdownTimeoutIsZeroWhichWouldWaitForever() {
		this.contextRunner
			.withPropertyValues("leader-election.backend=in-memory", "leader-election.shutdown-timeout=0s")
			.run((context) -> assertThat(analyze(context).getDescription())
				.isEqualTo("Invalid value '0s' for leader-election.shutdown-timeout: it must be positive"));
	}

	@Test
	void failsWithClearMessageWhenDurationCannotBeRead() {
		this.contextRunner
			.withPropertyValues("leader-election.backend=in-memory", "leader-election.lease-duration=soon")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription())
					.startsWith("Invalid value 'soon' for leader-election.lease-duration");
				assertThat(analysis.getAction())
					.isEqualTo("Set leader-election.lease-duration to a duration such as 15s, 500ms or PT15S.");
			});
	}

	@Test
	void failsWithClearMessageWhenGroupIsBlank() {
		this.contextRunner.withPropertyValues("leader-election.backend=in-memory", "leader-election.group=")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription())
					.isEqualTo("Invalid value '' for leader-election.group: group must not be blank");
				assertThat(analysis.getAction()).startsWith("Set leader-election.group to a name");
			});
	}

	@Test
	void failsWithClearMessageWhenApplicationNameIsTooLongForGroup() {
		this.contextRunner
			.withPropertyValues("leader-election.backend=in-memory", "spring.application.name=" + "a".repeat(300))
			.run((context) -> assertThat(analyze(context).getDescription()).startsWith("Invalid value '"
					+ "a".repeat(300) + "' for spring.application.name: group must be at " + "most 255 characters"));
	}

	@Test
	void failsWithClearMessageWhenCandidateIdIsBlank() {
		this.contextRunner.withPropertyValues("leader-election.backend=in-memory", "leader-election.candidate-id=")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription())
					.isEqualTo("Invalid value '' for leader-election.candidate-id: candidate id must not be blank");
				assertThat(analysis.getAction()).contains("or remove it to generate one");
			});
	}

	static FailureAnalysis analyze(AssertableApplicationContext context) {
		assertThat(context).hasFailed();
		FailureAnalysis analysis = new LeaderElectionFailureAnalyzer().analyze(context.getStartupFailure());
		assertThat(analysis).as("failure analysis of %s", context.getStartupFailure()).isNotNull();
		return analysis;
	}

	@Configuration(proxyBeanMethods = false)
	static class UserLeaseStoreConfiguration {

		@Bean
		InMemoryLeaseStore userLeaseStore() {
			return new InMemoryLeaseStore();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserEngineConfiguration {

		@Bean
		LeaderElectionEngine userEngine() {
			return LeaderElectionEngine.builder(new InMemoryLeaseStore()).candidateId("user").build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserElectionConfiguration {

		@Bean
		LeaderElection ordersElection(LeaderElectionRegistry registry) {
			return registry.join("orders");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ListenerConfiguration {

		@Bean
		RecordingListener recordingListener() {
			return new RecordingListener();
		}

	}

	static class RecordingListener implements LeaderElectionListener {

		final List<Leadership> granted = new CopyOnWriteArrayList<>();

		@Override
		public void granted(Leadership leadership) {
			this.granted.add(leadership);
		}

	}

}
