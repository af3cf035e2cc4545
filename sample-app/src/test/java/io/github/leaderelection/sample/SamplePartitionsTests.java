package io.github.leaderelection.sample;

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code partitions} profile: one instance alone owns all 8 partitions, shows them at
 * {@code GET /partitions} with their terms, and the endpoint lists each as a group and
 * shows the spread; it rebalances on request.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.datasource.url=jdbc:h2:mem:sample-partitions-test;DB_CLOSE_DELAY=-1",
				"leader-election.jdbc.allow-in-memory-database=true", "sample.job-interval=200ms",
				"leader-election.retry-period=500ms", "leader-election.renew-deadline=2s",
				"leader-election.lease-duration=3s", "management.endpoint.leaderelection.access=unrestricted" })
@ActiveProfiles("partitions")
class SamplePartitionsTests extends SampleHttpTests {

	@Test
	@SuppressWarnings("unchecked")
	void oneInstanceOwnsEveryPartitionAndShowsThemWithTheirTerms() {
		await().atMost(TIMEOUT).untilAsserted(() -> {
			Map<String, Object> partitions = get("/partitions").getBody();
			assertThat(partitions).containsEntry("group", "tasks");
			assertThat((Map<String, Object>) partitions.get("owned")).containsOnlyKeys("0", "1", "2", "3", "4", "5",
					"6", "7");
		});
		Map<String, Object> endpoint = get("/actuator/leaderelection").getBody();
		Map<String, Object> groups = (Map<String, Object>) endpoint.get("groups");
		assertThat(groups).containsKeys("tasks/0", "tasks/7");
		assertThat((Map<String, Object>) groups.get("tasks/3")).containsEntry("role", "LEADER");
		Map<String, Object> balance = (Map<String, Object>) endpoint.get("balance");
		assertThat(balance).containsEntry("spread", 0);
		assertThat(post("/actuator/leaderelection", Map.of("action", "rebalance")).getBody())
			.containsEntry("action", "rebalance")
			.containsEntry("outcome", "rebalancing");
	}

}
