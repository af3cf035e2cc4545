package io.github.leaderelection.autoconfigure;

import java.time.Duration;
import java.util.Optional;

import io.github.leaderelection.testing.ApplicationReady;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.LeaderInfo;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.LeadershipContext;
import io.github.leaderelection.OnlyOnLeader;
import io.github.leaderelection.aop.OnlyOnLeaderAdvisor;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.spi.LeaseStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static io.github.leaderelection.autoconfigure.LeaderElectionAutoConfigurationTests.analyze;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link DisabledLeaderElectionAutoConfiguration}: with
 * {@code leader-election.enabled=false} this instance leads every group, unelected, in
 * term 0, and code written for an election runs unchanged.
 */
@ExtendWith(OutputCaptureExtension.class)
class DisabledLeaderElectionAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class,
				DisabledLeaderElectionAutoConfiguration.class))
		.withUserConfiguration(DispatcherConfiguration.class);

	@Test
	void runsQuickStartCodeWithoutAnElectionInTermZero() {
		this.contextRunner.withPropertyValues("leader-election.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed();
			Dispatcher dispatcher = context.getBean(Dispatcher.class);
			assertThat(AopUtils.isAopProxy(dispatcher)).isTrue();
			assertThat(dispatcher.dispatch()).isZero();
			assertThat(dispatcher.dispatchReports()).isZero();
			assertThat(dispatcher.runs()).isEqualTo(2);
		});
	}

	@Test
	void runsQuickStartCodeWithAnElectionInAnElectedTerm() {
		this.contextRunner.withPropertyValues("leader-election.backend=in-memory").run((context) -> {
			ApplicationReady.publish(context);
			LeaderElection election = context.getBean(LeaderElection.class);
			await().atMost(Duration.ofSeconds(20)).until(election::isLeader);
			Dispatcher dispatcher = context.getBean(Dispatcher.class);
			assertThat(dispatcher.dispatch()).isPositive().isEqualTo(election.leadership().orElseThrow().term());
		});
	}

	@Test
	void exposesUnelectedLeadershipInsideGuardedMethods() {
		this.contextRunner
			.withPropertyValues("leader-election.enabled=false", "spring.application.name=billing",
					"leader-election.candidate-id=node-1")
			.run((context) -> {
				Optional<Leadership> inside = context.getBean(Dispatcher.class).leadership();
				assertThat(inside).isPresent();
				assertThat(inside.get().group()).isEqualTo("billing");
				assertThat(inside.get().candidateId()).isEqualTo("node-1");
				assertThat(inside.get().term()).isZero();
				assertThat(inside.get().isValid()).isTrue();
				assertThat(LeadershipContext.current()).isEmpty();
			});
	}

	@Test
	void providesElectionOfApplicationGroupThatLeadsInTermZero() {
		this.contextRunner
			.withPropertyValues("leader-election.enabled=false", "spring.application.name=billing",
					"leader-election.candidate-id=node-1")
			.run((context) -> {
				LeaderElection election = context.getBean(LeaderElection.class);
				assertThat(election.group()).isEqualTo("billing");
				assertThat(election.candidateId()).isEqualTo("node-1");
				assertThat(election.isLeader()).isTrue();
				assertThat(election.leadership()).hasValueSatisfying((leadership) -> {
					assertThat(leadership.term()).isZero();
					assertThat(leadership.isValid()).isTrue();
				});
				LeaderInfo self = new LeaderInfo("billing", "node-1", 0);
				assertThat(election.currentLeader()).contains(self);
				assertThat(election.readLeader()).contains(self);
			});
	}

	@Test
	void refusesOperationsThatWouldMoveLeadership() {
		this.contextRunner.withPropertyValues("leader-election.enabled=false").run((context) -> {
			LeaderElection election = context.getBean(LeaderElection.class);
			assertThatExceptionOfType(LeaderElectionException.class).isThrownBy(election::yieldLeadership)
				.withMessageContaining("leader-election.enabled=false");
			assertThatExceptionOfType(LeaderElectionException.class).isThrownBy(() -> election.forceLeader("other"))
				.withMessageContaining("leader-election.enabled=false");
			assertThatExceptionOfType(LeaderElectionException.class).isThrownBy(election::forceReelection)
				.withMessageContaining("leader-election.enabled=false");
			assertThat(election.isLeader()).isTrue();
		});
	}

	@Test
	void createsNoStoreNoEngineAndNoRegistry() {
		this.contextRunner.withPropertyValues("leader-election.enabled=false", "leader-election.backend=in-memory")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(LeaderElection.class)
				.hasSingleBean(OnlyOnLeaderAdvisor.class)
				.doesNotHaveBean(LeaderElectionRegistry.class)
				.doesNotHaveBean(LeaderElectionEngine.class)
				.doesNotHaveBean(LeaseStore.class)
				.doesNotHaveBean(LeaderElectionLifecycle.class));
	}

	@Test
	void needsNoBackend() {
		this.contextRunner.withPropertyValues("leader-election.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(LeaderElection.class));
	}

	@Test
	void backsOffWhenLeaderElectionIsEnabled() {
		this.contextRunner.withPropertyValues("leader-election.backend=in-memory")
			.run((context) -> assertThat(context).doesNotHaveBean(UnelectedLeaderElections.class)
				.hasSingleBean(LeaderElectionEngine.class));
	}

	@Test
	void backsOffWhenUserDefinesElection() {
		this.contextRunner.withPropertyValues("leader-election.enabled=false")
			.withBean("userElection", LeaderElection.class,
					() -> new UnelectedLeaderElections("user").registry().join("user-group"))
			.run((context) -> assertThat(context.getBean(LeaderElection.class).group()).isEqualTo("user-group"));
	}

	@Test
	void saysAtStartupThatEveryGuardedMethodRuns(CapturedOutput output) {
		this.contextRunner.withPropertyValues("leader-election.enabled=false")
			.run((context) -> assertThat(output).contains("WARN")
				.contains("Leader election is disabled (leader-election.enabled=false): this instance leads every "
						+ "group without an election, in term 0, and runs every @OnlyOnLeader method."));
	}

	@Test
	void failsWithClearMessageWhenGroupIsBlank() {
		this.contextRunner.withPropertyValues("leader-election.enabled=false", "leader-election.group=")
			.run((context) -> assertThat(analyze(context).getDescription())
				.isEqualTo("Invalid value '' for leader-election.group: group must not be blank"));
	}

	@Configuration(proxyBeanMethods = false)
	static class DispatcherConfiguration {

		@Bean
		Dispatcher dispatcher() {
			return new Dispatcher();
		}

	}

	/** The Quick start's job, as the README shows it. */
	public static class Dispatcher {

		private int runs;

		int runs() {
			return this.runs;
		}

		@OnlyOnLeader
		public long dispatch() {
			long term = LeadershipContext.current().orElseThrow().term();
			this.runs++;
			return term;
		}

		@OnlyOnLeader(group = "reports")
		public long dispatchReports() {
			long term = LeadershipContext.current().orElseThrow().term();
			this.runs++;
			return term;
		}

		@OnlyOnLeader
		public Optional<Leadership> leadership() {
			return LeadershipContext.current();
		}

	}

}
