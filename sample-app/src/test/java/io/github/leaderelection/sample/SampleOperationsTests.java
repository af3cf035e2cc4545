package io.github.leaderelection.sample;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.http.ResponseEntity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample app serves the leader election endpoint, health and metrics over HTTP; the
 * endpoint's write operations are off by default.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.datasource.url=jdbc:h2:mem:sample-operations-test;DB_CLOSE_DELAY=-1",
				"leader-election.jdbc.allow-in-memory-database=true", "leader-election.lease-duration=3s",
				"leader-election.renew-deadline=2s", "leader-election.retry-period=500ms" })
class SampleOperationsTests extends SampleHttpTests {

	@Test
	@SuppressWarnings("unchecked")
	void endpointShowsEveryGroupWithItsLeader() {
		await().atMost(TIMEOUT).until(this.election::isLeader);
		Map<String, Object> body = get("/actuator/leaderelection").getBody();
		Map<String, Object> group = child(child(body, "groups"), "sample-scheduler");
		assertThat(group).containsEntry("role", "LEADER")
			.containsEntry("candidateId", this.election.candidateId())
			.containsEntry("leader", this.election.candidateId())
			.containsEntry("backend", "jdbc")
			.containsEntry("storeReachable", true)
			.containsKeys("leaderSince", "leaseRemaining", "history");
		assertThat((List<Map<String, Object>>) group.get("history"))
			.anySatisfy((transition) -> assertThat(transition).containsEntry("type", "granted")
				.containsEntry("leader", this.election.candidateId()));
		assertThat(((Number) group.get("term")).longValue()).isEqualTo(this.election.leadership().orElseThrow().term());
		assertThat(get("/actuator/leaderelection/sample-scheduler").getBody()).containsEntry("role", "LEADER");
		assertThat(get("/actuator/leaderelection/no-such-group").getStatusCode().value()).isEqualTo(404);
	}

	@Test
	void healthIsUpWithTheGroupsDetails() {
		await().atMost(TIMEOUT).until(this.election::isLeader);
		Map<String, Object> leaderElection = child(child(get("/actuator/health").getBody(), "components"),
				"leaderElection");
		assertThat(leaderElection).containsEntry("status", "UP");
		Map<String, Object> group = child(child(child(leaderElection, "details"), "groups"), "sample-scheduler");
		assertThat(group).containsEntry("role", "LEADER").containsEntry("backend", "jdbc").containsKey("term");
	}

	@Test
	void metricsShowLeadershipAndStoreRequests() {
		await().atMost(TIMEOUT).until(this.election::isLeader);
		Map<String, Object> leader = get("/actuator/metrics/leader.election.leader?tag=group:sample-scheduler")
			.getBody();
		assertThat(measurement(leader)).isEqualTo(1.0);
		assertThat(tagKeys(leader)).contains("backend");
		await().atMost(TIMEOUT)
			.until(() -> get("/actuator/metrics/leader.election.store.requests?tag=operation:renew&tag=outcome:success")
				.getStatusCode()
				.is2xxSuccessful());
		Map<String, Object> transitions = get("/actuator/metrics/leader.election.transitions?tag=type:granted")
			.getBody();
		assertThat(measurement(transitions)).isGreaterThanOrEqualTo(1.0);
	}

	@Test
	void writeOperationsAreNotAvailableByDefault() {
		await().atMost(TIMEOUT).until(this.election::isLeader);
		ResponseEntity<Map<String, Object>> response = post("/actuator/leaderelection/sample-scheduler/yield", null);
		assertThat(response.getStatusCode().is4xxClientError()).isTrue();
		assertThat(this.election.isLeader()).isTrue();
	}

	@SuppressWarnings("unchecked")
	static Map<String, Object> child(Map<String, Object> parent, String name) {
		assertThat(parent).containsKey(name);
		return (Map<String, Object>) parent.get(name);
	}

	@SuppressWarnings("unchecked")
	private static double measurement(Map<String, Object> metric) {
		List<Map<String, Object>> measurements = (List<Map<String, Object>>) metric.get("measurements");
		return ((Number) measurements.get(0).get("value")).doubleValue();
	}

	@SuppressWarnings("unchecked")
	private static List<Object> tagKeys(Map<String, Object> metric) {
		return ((List<Map<String, Object>>) metric.get("availableTags")).stream().map((tag) -> tag.get("tag")).toList();
	}

}
