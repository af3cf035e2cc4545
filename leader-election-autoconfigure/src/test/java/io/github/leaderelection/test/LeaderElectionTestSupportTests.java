package io.github.leaderelection.test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.testing.ApplicationReady;
import io.github.leaderelection.autoconfigure.LeaderElectionAutoConfiguration;
import io.github.leaderelection.event.LeaderChangedEvent;
import io.github.leaderelection.event.LeaderElectionEvent;
import io.github.leaderelection.event.LeaderGrantedEvent;
import io.github.leaderelection.event.LeaderRevokedEvent;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.event.EventListener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link LeaderElectionTestSupport}: every change has been delivered when a
 * call returns, and it lasts.
 */
class LeaderElectionTestSupportTests {

	// A short lease: each switch from follower back to leader waits out the lease this
	// instance held before it was made a follower.
	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class,
				LeaderElectionTestSupportAutoConfiguration.class))
		.withPropertyValues("leader-election.backend=in-memory", "leader-election.group=orders",
				"leader-election.lease-duration=2s", "leader-election.renew-deadline=1500ms",
				"leader-election.retry-period=250ms")
		.withBean(EventRecorder.class);

	@Test
	void becomesLeaderWithTheGrantAlreadyPublished() {
		this.contextRunner.run((context) -> {
			ApplicationReady.publish(context);
			Leadership leadership = context.getBean(LeaderElectionTestSupport.class).becomeLeader();
			assertThat(context.getBean(LeaderElection.class).isLeader()).isTrue();
			assertThat(context.getBean(EventRecorder.class).events).anySatisfy((event) -> {
				assertThat(event).isInstanceOf(LeaderGrantedEvent.class);
				assertThat(((LeaderGrantedEvent) event).term()).isEqualTo(leadership.term());
			});
		});
	}

	@Test
	void becomesFollowerWithTheRevocationAndTheNewLeaderAlreadyPublished() {
		this.contextRunner.run((context) -> {
			ApplicationReady.publish(context);
			LeaderElectionTestSupport support = context.getBean(LeaderElectionTestSupport.class);
			Leadership leadership = support.becomeLeader();
			support.becomeFollower();
			LeaderElection election = context.getBean(LeaderElection.class);
			assertThat(election.isLeader()).isFalse();
			List<LeaderElectionEvent> events = context.getBean(EventRecorder.class).events;
			assertThat(events).anySatisfy((event) -> {
				assertThat(event).isInstanceOf(LeaderRevokedEvent.class);
				assertThat(((LeaderRevokedEvent) event).term()).isEqualTo(leadership.term());
				assertThat(((LeaderRevokedEvent) event).reason()).isEqualTo(RevocationReason.FORCED_ELSEWHERE);
			});
			LeaderElectionEvent last = events.get(events.size() - 1);
			assertThat(last).isInstanceOf(LeaderChangedEvent.class);
			assertThat(((LeaderChangedEvent) last).leader().orElseThrow().candidateId())
				.isEqualTo(LeaderElectionTestSupport.OTHER_CANDIDATE);
		});
	}

	@Test
	void staysFollowerLongAfterTheLeaseWouldHaveRunOut() {
		this.contextRunner.run((context) -> {
			ApplicationReady.publish(context);
			context.getBean(LeaderElectionTestSupport.class).becomeFollower();
			Thread.sleep(3000); // longer than the 2s lease
			LeaderElection election = context.getBean(LeaderElection.class);
			assertThat(election.isLeader()).isFalse();
			assertThat(election.currentLeader().orElseThrow().candidateId())
				.isEqualTo(LeaderElectionTestSupport.OTHER_CANDIDATE);
		});
	}

	@Test
	void switchesBackAndForthWithGrowingTerms() {
		this.contextRunner.run((context) -> {
			ApplicationReady.publish(context);
			LeaderElectionTestSupport support = context.getBean(LeaderElectionTestSupport.class);
			LeaderElection election = context.getBean(LeaderElection.class);
			long term = 0;
			for (int i = 0; i < 3; i++) {
				support.becomeFollower();
				assertThat(election.isLeader()).isFalse();
				Leadership leadership = support.becomeLeader();
				assertThat(election.isLeader()).isTrue();
				assertThat(leadership.term()).isGreaterThan(term);
				term = leadership.term();
			}
			assertThat(support.becomeLeader().term()).isEqualTo(term);
		});
	}

	@Test
	void joinsOtherGroups() {
		this.contextRunner.run((context) -> {
			ApplicationReady.publish(context);
			LeaderElectionTestSupport support = context.getBean(LeaderElectionTestSupport.class);
			support.becomeLeader("billing");
			support.becomeFollower();
			assertThat(context.getBean(LeaderElection.class).isLeader()).isFalse();
			assertThat(context.getBean(LeaderElectionTestSupport.class).becomeLeader("billing").group())
				.isEqualTo("billing");
		});
	}

	@Test
	void refusesToDriveAnotherBackend() {
		this.contextRunner
			.withPropertyValues("leader-election.backend=jdbc", "leader-election.jdbc.allow-in-memory-database=true")
			.withBean(JdbcDataSource.class, () -> {
				JdbcDataSource dataSource = new JdbcDataSource();
				dataSource.setURL("jdbc:h2:mem:test-support;DB_CLOSE_DELAY=-1");
				return dataSource;
			})
			.withConfiguration(AutoConfigurations
				.of(org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration.class))
			.run((context) -> {
				ApplicationReady.publish(context);
				assertThatIllegalStateException()
					.isThrownBy(() -> context.getBean(LeaderElectionTestSupport.class).becomeLeader())
					.withMessageContaining("needs the in-memory backend")
					.withMessageContaining("leader-election.backend=in-memory");
			});
	}

	@Test
	void isNotConfiguredOutsideTests() {
		// Only a test class's annotation imports it: it is not one of the application's
		// auto-configurations, whatever the class path holds.
		List<String> applications = ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader())
			.getCandidates();
		assertThat(applications).contains(LeaderElectionAutoConfiguration.class.getName())
			.doesNotContain(LeaderElectionTestSupportAutoConfiguration.class.getName());
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class))
			.withPropertyValues("leader-election.backend=in-memory")
			.run((context) -> assertThat(context).doesNotHaveBean(LeaderElectionTestSupport.class));
	}

	static class EventRecorder {

		final List<LeaderElectionEvent> events = new CopyOnWriteArrayList<>();

		@EventListener
		void on(LeaderElectionEvent event) {
			this.events.add(event);
		}

	}

}
