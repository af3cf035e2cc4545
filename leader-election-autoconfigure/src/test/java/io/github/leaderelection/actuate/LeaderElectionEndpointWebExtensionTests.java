package io.github.leaderelection.actuate;

import java.time.Duration;
import java.util.Map;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.autoconfigure.LeaderElectionAutoConfiguration;
import io.github.leaderelection.autoconfigure.LeaderElectionEndpointAutoConfiguration;
import io.github.leaderelection.autoconfigure.LeaderElectionMetricsAutoConfiguration;
import io.github.leaderelection.testing.ApplicationReady;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link LeaderElectionEndpointWebExtension}, as auto-configured, on an
 * in-process ZooKeeper server, whose store lists each group's participants.
 */
class LeaderElectionEndpointWebExtensionTests {

	@Test
	void theEndpointListsTheParticipantsAndRefusesToForceAnotherCandidateWithMetricsOn() throws Exception {
		try (TestingServer server = new TestingServer()) {
			new ApplicationContextRunner()
				.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class,
						LeaderElectionMetricsAutoConfiguration.class, LeaderElectionEndpointAutoConfiguration.class))
				.withBean(SimpleMeterRegistry.class)
				.withPropertyValues("leader-election.zookeeper.connect-string=" + server.getConnectString(),
						"spring.application.name=participants", "leader-election.candidate-id=only-one",
						"management.endpoints.web.exposure.include=leaderelection")
				.run((context) -> {
					ApplicationReady.publish(context);
					LeaderElection election = context.getBean(LeaderElection.class);
					await().atMost(Duration.ofSeconds(20)).until(election::isLeader);
					LeaderElectionEndpoint endpoint = context.getBean(LeaderElectionEndpoint.class);
					assertThat(endpoint.group("participants").participants()).containsExactly("only-one");
					WebEndpointResponse<Object> refused = context.getBean(LeaderElectionEndpointWebExtension.class)
						.act("participants", "force-leader", "not-running");
					assertThat(refused.getStatus()).isEqualTo(409);
					assertThat(election.isLeader()).isTrue();
				});
		}
	}

	@Test
	@SuppressWarnings("unchecked")
	void countsOperatorActionsAndAnswers429WithWhenToRetryBeyondTheConfiguredLimit() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class,
					LeaderElectionMetricsAutoConfiguration.class, LeaderElectionEndpointAutoConfiguration.class))
			.withBean(SimpleMeterRegistry.class)
			.withPropertyValues("leader-election.backend=in-memory", "spring.application.name=limited",
					"leader-election.endpoint.max-actions-per-group=2", "leader-election.endpoint.action-window=10m",
					"management.endpoints.web.exposure.include=leaderelection")
			.run((context) -> {
				ApplicationReady.publish(context);
				LeaderElectionEndpointWebExtension web = context.getBean(LeaderElectionEndpointWebExtension.class);
				assertThat(web.act("limited", "force-reelection", null).getStatus()).isEqualTo(200);
				assertThat(web.act("limited", "yield", null).getStatus()).isEqualTo(200);
				WebEndpointResponse<Object> limited = web.act("limited", "force-reelection", null);
				assertThat(limited.getStatus()).isEqualTo(429);
				assertThat((Map<String, Object>) limited.getBody()).containsEntry("error", "too-many-actions")
					.containsKey("retryAfterSeconds");
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				assertThat(meters.get("leader.election.operator.actions")
					.tags("group", "limited", "action", "force-reelection", "outcome", "done")
					.counter()
					.count()).isEqualTo(1);
				assertThat(meters.get("leader.election.operator.actions")
					.tags("group", "limited", "action", "force-reelection", "outcome", "limited")
					.counter()
					.count()).isEqualTo(1);
				WebEndpointResponse<Object> invalid = web.act("limited", "force-leader", "a\nb");
				assertThat(invalid.getStatus()).isEqualTo(400);
			});
	}

}
