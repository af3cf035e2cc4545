package io.github.leaderelection.actuate;

import java.time.Duration;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.autoconfigure.LeaderElectionAutoConfiguration;
import io.github.leaderelection.autoconfigure.LeaderElectionEndpointAutoConfiguration;
import io.github.leaderelection.autoconfigure.LeaderElectionMetricsAutoConfiguration;
import io.github.leaderelection.testing.ApplicationReady;
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

}
