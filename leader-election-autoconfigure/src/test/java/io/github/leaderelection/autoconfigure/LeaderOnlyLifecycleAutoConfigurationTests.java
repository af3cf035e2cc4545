package io.github.leaderelection.autoconfigure;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.leaderelection.testing.ApplicationReady;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.lifecycle.LeaderOnlyLifecycle;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.test.LeaderElectionTestSupport;
import io.github.leaderelection.test.LeaderElectionTestSupportAutoConfiguration;
import org.junit.jupiter.api.Test;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

/**
 * Tests for {@link LeaderOnlyLifecycleAutoConfiguration}: lifecycle beans that run only
 * on the leader.
 */
class LeaderOnlyLifecycleAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class,
				LeaderOnlyLifecycleAutoConfiguration.class, LeaderElectionTestSupportAutoConfiguration.class))
		.withPropertyValues("leader-election.backend=in-memory", "leader-election.group=orders",
				"leader-election.lease-duration=3s", "leader-election.renew-deadline=2s",
				"leader-election.retry-period=500ms");

	private final ApplicationContextRunner lifecycleRunner = this.contextRunner
		.withUserConfiguration(LifecycleConfiguration.class)
		.withPropertyValues("leader-election.lifecycle.beans=container");

	@Test
	void contextDoesNotStartLeaderOnlyBeans() {
		this.lifecycleRunner.run((context) -> {
			assertThat(context.getBean("poller", RecordingLifecycle.class).isRunning()).isFalse();
			assertThat(context.getBean("container", Container.class).isRunning()).isFalse();
			assertThat(context.getBean(BillingPoller.class).isRunning()).isFalse();
			assertThat(context.getBean("everywhere", RecordingLifecycle.class).isRunning()).isTrue();
			assertThat(context.getBean(LeaderOnlyLifecycleController.class).bindings()).containsOnly(
					entry("poller", "orders"), entry("container", "orders"), entry("billingPoller", "billing"));
		});
	}

	@Test
	void turnsOffAutoStartupThroughTheBeansOwnPropertyWhenItHasOne() {
		this.lifecycleRunner.run((context) -> {
			Container container = context.getBean("container", Container.class);
			assertThat(AopUtils.isAopProxy(container)).isFalse();
			assertThat(container.isAutoStartup()).isFalse();
			RecordingLifecycle poller = context.getBean("poller", RecordingLifecycle.class);
			assertThat(AopUtils.isAopProxy(poller)).isTrue();
			assertThat(poller.isAutoStartup()).isFalse();
		});
	}

	@Test
	void startsBeansWhenLeadershipIsGrantedAndStopsThemWhenItIsRevoked() {
		this.lifecycleRunner.run((context) -> {
			ApplicationReady.publish(context);
			LeaderElectionTestSupport support = context.getBean(LeaderElectionTestSupport.class);
			RecordingLifecycle poller = context.getBean("poller", RecordingLifecycle.class);
			Container container = context.getBean("container", Container.class);
			BillingPoller billing = context.getBean(BillingPoller.class);
			support.becomeLeader();
			assertThat(poller.isRunning()).isTrue();
			assertThat(container.isRunning()).isTrue();
			support.becomeLeader("billing");
			assertThat(billing.isRunning()).isTrue();

			support.becomeFollower();
			assertThat(poller.isRunning()).isFalse();
			assertThat(container.isRunning()).isFalse();
			assertThat(billing.isRunning()).isTrue();
			// Started in ascending phase order, stopped in descending.
			assertThat(poller.events()).containsExactly("start", "stop");
			assertThat(Timeline.of(poller, container)).containsExactly("container start", "poller start", "poller stop",
					"container stop");

			support.becomeLeader();
			assertThat(poller.isRunning()).isTrue();
			assertThat(container.isRunning()).isTrue();
		});
	}

	@Test
	void stopsBeansOnShutdownBeforeTheLeaseIsReleased() {
		this.lifecycleRunner.run((context) -> {
			ApplicationReady.publish(context);
			context.getBean(LeaderElectionTestSupport.class).becomeLeader();
			RecordingLifecycle poller = context.getBean("poller", RecordingLifecycle.class);
			String candidateId = context.getBean(LeaderElection.class).candidateId();
			LeaseStore store = context.getBean(LeaseStore.class);
			context.close();
			assertThat(poller.isRunning()).isFalse();
			assertThat(poller.holderWhenStopped()).contains(candidateId);
			assertThat(store.read("orders", Duration.ofSeconds(1)).map(Lease::holder)).isEmpty();
		});
	}

	@Test
	void joinsTheGroupsOfLeaderOnlyBeans() {
		this.lifecycleRunner
			.run((context) -> assertThat(context.getBean(LeaderElectionRegistry.class).find("billing")).isPresent());
	}

	@Test
	void failsWithClearMessageWhenPropertyNamesAMissingBean() {
		this.contextRunner.withPropertyValues("leader-election.lifecycle.beans=nosuchbean").run((context) -> {
			assertThat(context).getFailure()
				.hasMessageContaining("leader-election.lifecycle.beans names bean 'nosuchbean'")
				.hasMessageContaining("no such bean");
			FailureAnalysis analysis = new LeaderElectionFailureAnalyzer().analyze(context.getStartupFailure());
			assertThat(analysis).as("explained by the failure analyzer").isNotNull();
			assertThat(analysis.getDescription())
				.isEqualTo("leader-election.lifecycle.beans names bean 'nosuchbean', but there is no such bean.");
			assertThat(analysis.getAction()).contains("or remove 'nosuchbean'")
				.contains("The Lifecycle beans of this context are: ");
		});
	}

	@Test
	void failsWithClearMessageWhenANonLifecycleBeanIsDeclaredLeaderOnly() {
		this.contextRunner.withUserConfiguration(NotALifecycleConfiguration.class)
			.run((context) -> assertThat(context).getFailure()
				.hasMessageContaining("Bean 'notALifecycle' is annotated with @LeaderOnlyLifecycle")
				.hasMessageContaining("not a Lifecycle")
				.satisfies((failure) -> assertThat(new LeaderElectionFailureAnalyzer().analyze(failure))
					.as("explained by the failure analyzer")
					.isNotNull()));
	}

	@Test
	void beansStartWithTheContextWhenLeaderElectionIsDisabled() {
		this.lifecycleRunner.withPropertyValues("leader-election.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(LeaderOnlyLifecycleController.class);
			assertThat(context.getBean("poller", RecordingLifecycle.class).isRunning()).isTrue();
		});
	}

	@Test
	void aBeanThatFailsToStartDoesNotStopTheOthers() {
		this.lifecycleRunner.withUserConfiguration(FailingConfiguration.class).run((context) -> {
			ApplicationReady.publish(context);
			context.getBean(LeaderElectionTestSupport.class).becomeLeader();
			assertThat(context.getBean("poller", RecordingLifecycle.class).isRunning()).isTrue();
			assertThat(context.getBean(LeaderElection.class).isLeader()).isTrue();
		});
	}

	/** A SmartLifecycle as an application writes one: it says it starts automatically. */
	static class RecordingLifecycle implements SmartLifecycle {

		private final String name;

		private final int phase;

		private final List<String> events = new CopyOnWriteArrayList<>();

		private volatile boolean running;

		private final ObjectProvider<LeaseStore> store;

		private volatile Optional<String> holderWhenStopped = Optional.empty();

		RecordingLifecycle(String name, int phase, ObjectProvider<LeaseStore> store) {
			this.name = name;
			this.phase = phase;
			this.store = store;
		}

		@Override
		public void start() {
			this.events.add("start");
			Timeline.add(this.name + " start");
			this.running = true;
		}

		@Override
		public void stop() {
			this.holderWhenStopped = this.store.getObject().read("orders", Duration.ofSeconds(1)).map(Lease::holder);
			this.events.add("stop");
			Timeline.add(this.name + " stop");
			this.running = false;
		}

		@Override
		public boolean isRunning() {
			return this.running;
		}

		@Override
		public int getPhase() {
			return this.phase;
		}

		// Public, so that the proxy that keeps the context from starting the bean passes
		// them on.
		public List<String> events() {
			return this.events;
		}

		public String name() {
			return this.name;
		}

		public Optional<String> holderWhenStopped() {
			return this.holderWhenStopped;
		}

	}

	/** Like a message listener container: it has an autoStartup property. */
	static class Container extends RecordingLifecycle {

		private boolean autoStartup = true;

		Container(ObjectProvider<LeaseStore> store) {
			super("container", -10, store);
		}

		public void setAutoStartup(boolean autoStartup) {
			this.autoStartup = autoStartup;
		}

		@Override
		public boolean isAutoStartup() {
			return this.autoStartup;
		}

	}

	@LeaderOnlyLifecycle(group = "billing")
	static class BillingPoller extends RecordingLifecycle {

		BillingPoller(ObjectProvider<LeaseStore> store) {
			super("billing", 0, store);
		}

	}

	/** The order in which all beans started and stopped. */
	static final class Timeline {

		private static final List<String> events = new CopyOnWriteArrayList<>();

		static void add(String event) {
			events.add(event);
		}

		static List<String> of(RecordingLifecycle... beans) {
			List<String> names = Arrays.stream(beans).map(RecordingLifecycle::name).toList();
			return events.stream().filter((event) -> names.contains(event.substring(0, event.indexOf(' ')))).toList();
		}

		static void clear() {
			events.clear();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class LifecycleConfiguration {

		LifecycleConfiguration() {
			Timeline.clear();
		}

		@Bean
		@LeaderOnlyLifecycle
		RecordingLifecycle poller(ObjectProvider<LeaseStore> store) {
			return new RecordingLifecycle("poller", 0, store);
		}

		@Bean
		Container container(ObjectProvider<LeaseStore> store) {
			return new Container(store);
		}

		@Bean
		BillingPoller billingPoller(ObjectProvider<LeaseStore> store) {
			return new BillingPoller(store);
		}

		@Bean
		RecordingLifecycle everywhere(ObjectProvider<LeaseStore> store) {
			return new RecordingLifecycle("everywhere", 0, store);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FailingConfiguration {

		@Bean
		@LeaderOnlyLifecycle
		SmartLifecycle failing() {
			return new SmartLifecycle() {

				@Override
				public void start() {
					throw new IllegalStateException("cannot start (injected)");
				}

				@Override
				public void stop() {
				}

				@Override
				public boolean isRunning() {
					return false;
				}

				@Override
				public int getPhase() {
					return -100;
				}

			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NotALifecycleConfiguration {

		@Bean
		@LeaderOnlyLifecycle
		String notALifecycle() {
			return "not a lifecycle";
		}

	}

}
