package io.github.leaderelection.sample;

import java.net.ConnectException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeoutException;

import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Every way a write operation of the {@code leaderelection} endpoint can fail answers
 * over HTTP with a status an operator can act on and a JSON body, never a 500. The store
 * is the in-memory one, with candidate ids that make it refuse, fail or time out as a
 * real store would.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.datasource.url=jdbc:h2:mem:sample-endpoint-statuses-test;DB_CLOSE_DELAY=-1",
				"leader-election.jdbc.allow-in-memory-database=true",
				"management.endpoint.leaderelection.access=unrestricted", "leader-election.lease-duration=3s",
				"leader-election.renew-deadline=2s", "leader-election.retry-period=500ms" })
class SampleEndpointStatusesTests extends SampleHttpTests {

	private static final String GROUP = "/actuator/leaderelection/sample-scheduler";

	@Test
	void forcingAKnownCandidateSucceeds() {
		await().atMost(TIMEOUT).until(this.election::isLeader);
		ResponseEntity<Map<String, Object>> response = post(GROUP + "/force-leader",
				Map.of("candidateId", this.election.candidateId()));
		assertThat(response.getStatusCode().value()).isEqualTo(200);
		assertThat(response.getBody()).containsEntry("outcome", "forced");
	}

	@Test
	void badInputIs400() {
		assertFailure(post(GROUP + "/force-leader", Map.of()), 400, "bad-request", false, "Missing candidateId");
		assertFailure(post(GROUP + "/force-leader", Map.of("candidateId", "bad\nid")), 400, "bad-request", false,
				"Invalid candidateId");
		assertFailure(post(GROUP + "/abdicate", Map.of()), 400, "bad-request", false, "Unknown action 'abdicate'");
	}

	@Test
	void anUnknownGroupIs404() {
		assertFailure(post("/actuator/leaderelection/no-such-group/yield", Map.of()), 404, "unknown-group", false,
				"Unknown group 'no-such-group'");
	}

	@Test
	void aCandidateTheStoreRefusesIs409() {
		assertFailure(post(GROUP + "/force-leader", Map.of("candidateId", "not-running")), 409, "refused", false,
				"does not take part");
	}

	@Test
	void aStoreThatFailsIs503AndSaysTheActionMayHaveTakenEffect() {
		assertFailure(post(GROUP + "/force-leader", Map.of("candidateId", "store-down")), 503, "store-unavailable",
				true, "may or may not have taken effect");
	}

	@Test
	void aStoreThatDoesNotAnswerInTimeIs504AndSaysTheActionMayStillTakeEffect() {
		assertFailure(post(GROUP + "/force-leader", Map.of("candidateId", "store-slow")), 504, "store-timeout", true,
				"may still take effect");
	}

	private void assertFailure(ResponseEntity<Map<String, Object>> response, int status, String error,
			boolean mayStillTakeEffect, String message) {
		assertThat(response.getStatusCode().value()).isEqualTo(status);
		assertThat(response.getBody()).containsEntry("status", status)
			.containsEntry("error", error)
			.containsEntry("mayStillTakeEffect", mayStillTakeEffect);
		assertThat((String) response.getBody().get("message")).contains(message);
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class MisbehavingStoreConfiguration {

		/**
		 * A store that refuses, fails or times out for some candidate ids, as a real one
		 * would.
		 */
		@Bean
		LeaseStore misbehavingLeaseStore() {
			return new InMemoryLeaseStore() {

				@Override
				public void forceLeader(String group, String candidateId, Duration timeout) {
					switch (candidateId) {
						case "not-running" -> throw new IllegalStateException("Candidate '" + candidateId
								+ "' does not take part in the election of group '" + group + "'");
						case "store-down" -> throw new RuntimeException(new ConnectException("Connection refused"));
						case "store-slow" -> throw new RuntimeException(new TimeoutException("did not answer in time"));
						default -> super.forceLeader(group, candidateId, timeout);
					}
				}

			};
		}

	}

}
