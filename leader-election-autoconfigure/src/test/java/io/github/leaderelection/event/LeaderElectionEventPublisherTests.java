package io.github.leaderelection.event;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderInfo;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.testing.ApplicationReady;
import io.github.leaderelection.autoconfigure.LeaderElectionAutoConfiguration;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link LeaderElectionEventPublisher}, as auto-configured.
 */
class LeaderElectionEventPublisherTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class))
		.withPropertyValues("leader-election.backend=in-memory", "leader-election.candidate-id=node-1")
		.withUserConfiguration(EventsConfiguration.class);

	@Test
	void isAutoConfiguredWithTheElection() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class))
			.withPropertyValues("leader-election.backend=in-memory")
			.run((context) -> assertThat(context).hasSingleBean(LeaderElectionEventPublisher.class));
	}

	@Test
	void publishesGrantedAndChangedEventsOnNotificationThread() {
		this.contextRunner.run((context) -> {
			ApplicationReady.publish(context);
			Events events = context.getBean(Events.class);
			LeaderGrantedEvent granted = events.first(LeaderGrantedEvent.class);
			assertThat(granted.group()).isEqualTo("default");
			assertThat(granted.candidateId()).isEqualTo("node-1");
			assertThat(granted.term()).isEqualTo(1);
			assertThat(granted.election()).isSameAs(context.getBean(LeaderElection.class));
			LeaderChangedEvent changed = events.first(LeaderChangedEvent.class);
			assertThat(changed.leader()).contains(new LeaderInfo("default", "node-1", 1));
			assertThat(changed.isThisInstance()).isTrue();
			assertThat(events.threads()).isNotEmpty().allMatch((name) -> name.startsWith("leader-election-events"));
		});
	}

	@Test
	void publishesRevokedEventWithReason() {
		this.contextRunner.run((context) -> {
			ApplicationReady.publish(context);
			Events events = context.getBean(Events.class);
			LeaderGrantedEvent granted = events.first(LeaderGrantedEvent.class);
			context.getBean(LeaderElection.class).yieldLeadership();
			LeaderRevokedEvent revoked = events.first(LeaderRevokedEvent.class);
			assertThat(revoked.reason()).isEqualTo(RevocationReason.YIELDED);
			assertThat(revoked.leadership()).isEqualTo(granted.leadership());
			assertThat(revoked.term()).isEqualTo(granted.term());
			assertThat(revoked.leadership().isValid()).isFalse();
		});
	}

	@Test
	void publishesRevokedEventOnShutdown() {
		this.contextRunner.run((context) -> {
			ApplicationReady.publish(context);
			Events events = context.getBean(Events.class);
			events.first(LeaderGrantedEvent.class);
			context.close();
			assertThat(events.first(LeaderRevokedEvent.class).reason()).isEqualTo(RevocationReason.SHUTDOWN);
		});
	}

	@Test
	void publishesChangedEventWhenAnotherCandidateLeads() {
		this.contextRunner.withUserConfiguration(OtherLeaderConfiguration.class).run((context) -> {
			ApplicationReady.publish(context);
			LeaderChangedEvent changed = context.getBean(Events.class).first(LeaderChangedEvent.class);
			assertThat(changed.leader()).map(LeaderInfo::candidateId).contains("node-2");
			assertThat(changed.isThisInstance()).isFalse();
			assertThat(context.getBean(Events.class).of(LeaderGrantedEvent.class)).isEmpty();
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class EventsConfiguration {

		@Bean
		Events events() {
			return new Events();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OtherLeaderConfiguration {

		@Bean
		InMemoryLeaseStore leaseStore() {
			InMemoryLeaseStore store = new InMemoryLeaseStore();
			store.tryAcquire("default", "node-2", Duration.ofHours(1), Duration.ofSeconds(1));
			return store;
		}

	}

	static class Events {

		private final List<LeaderElectionEvent> events = new CopyOnWriteArrayList<>();

		private final List<String> threads = new CopyOnWriteArrayList<>();

		@EventListener
		void on(LeaderElectionEvent event) {
			this.events.add(event);
			this.threads.add(Thread.currentThread().getName());
		}

		<E extends LeaderElectionEvent> List<E> of(Class<E> type) {
			return this.events.stream().filter(type::isInstance).map(type::cast).toList();
		}

		<E extends LeaderElectionEvent> E first(Class<E> type) {
			await().atMost(TIMEOUT).until(() -> !of(type).isEmpty());
			return of(type).get(0);
		}

		List<String> threads() {
			return this.threads;
		}

	}

}
