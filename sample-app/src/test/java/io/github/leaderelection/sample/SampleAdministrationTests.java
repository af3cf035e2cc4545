package io.github.leaderelection.sample;

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.http.ResponseEntity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * With unrestricted access, the endpoint's write operations move leadership over HTTP.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.datasource.url=jdbc:h2:mem:sample-administration-test;DB_CLOSE_DELAY=-1",
				"leader-election.jdbc.allow-in-memory-database=true", "leader-election.lease-duration=3s",
				"leader-election.renew-deadline=2s", "leader-election.retry-period=500ms",
				"management.endpoint.leaderelection.access=unrestricted" })
class SampleAdministrationTests extends SampleHttpTests {

	@Test
	void yieldsAndForcesAReElectionOverHttp() {
		await().atMost(TIMEOUT).until(this.election::isLeader);
		long term = this.election.leadership().orElseThrow().term();

		ResponseEntity<Map<String, Object>> yielded = post("/actuator/leaderelection/sample-scheduler/yield", null);
		assertThat(yielded.getStatusCode().value()).isEqualTo(200);
		assertThat(yielded.getBody()).containsEntry("outcome", "yielded")
			.containsEntry("candidateId", this.election.candidateId());
		// The only candidate takes the lease again once it is back in the race.
		await().atMost(TIMEOUT)
			.until(() -> this.election.leadership().filter((leadership) -> leadership.term() > term).isPresent());

		long yieldedTerm = this.election.leadership().orElseThrow().term();
		ResponseEntity<Map<String, Object>> reelection = post(
				"/actuator/leaderelection/sample-scheduler/force-reelection", null);
		assertThat(reelection.getBody()).containsEntry("outcome", "forced");
		await().atMost(TIMEOUT)
			.until(() -> this.election.leadership()
				.filter((leadership) -> leadership.term() > yieldedTerm)
				.isPresent());
	}

	@Test
	void forcingALeaderNeedsACandidate() {
		ResponseEntity<Map<String, Object>> response = post("/actuator/leaderelection/sample-scheduler/force-leader",
				Map.of());
		assertThat(response.getStatusCode().value()).isEqualTo(400);
		ResponseEntity<Map<String, Object>> forced = post("/actuator/leaderelection/sample-scheduler/force-leader",
				Map.of("candidateId", this.election.candidateId()));
		assertThat(forced.getBody()).containsEntry("outcome", "forced");
	}

}
