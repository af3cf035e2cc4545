package io.github.leaderelection.security;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.sample.SampleApplication;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code leaderelection} endpoint behind the security configuration that
 * docs/security.md shows ({@link LeaderElectionEndpointSecurity}): anonymous callers
 * neither read nor write it, an operator reads it, an administrator moves leadership.
 */
@SpringBootTest(classes = SampleApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.autoconfigure.exclude=",
				"spring.datasource.url=jdbc:h2:mem:sample-security-test;DB_CLOSE_DELAY=-1",
				"leader-election.jdbc.allow-in-memory-database=true", "leader-election.lease-duration=3s",
				"leader-election.renew-deadline=2s", "leader-election.retry-period=500ms",
				"management.endpoint.leaderelection.access=unrestricted" })
@Import({ LeaderElectionEndpointSecurity.class, SampleSecurityTests.Users.class })
class SampleSecurityTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final String GROUP = "/actuator/leaderelection/sample-scheduler";

	private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {
	};

	@LocalServerPort
	private int port;

	@Autowired
	private LeaderElection election;

	@Test
	void anonymousCallersNeitherReadNorWriteTheEndpoint() {
		await().atMost(TIMEOUT).until(this.election::isLeader);
		long term = this.election.leadership().orElseThrow().term();
		assertThat(get(null, "/actuator/leaderelection").getStatusCode().value()).isEqualTo(401);
		assertThat(get(null, GROUP).getStatusCode().value()).isEqualTo(401);
		assertThat(post(null, GROUP + "/yield").getStatusCode().value()).isEqualTo(401);
		assertThat(post(null, GROUP + "/force-reelection").getStatusCode().value()).isEqualTo(401);
		assertThat(this.election.leadership())
			.hasValueSatisfying((leadership) -> assertThat(leadership.term()).isEqualTo(term));
	}

	@Test
	void anOperatorReadsTheEndpointButDoesNotWrite() {
		await().atMost(TIMEOUT).until(this.election::isLeader);
		ResponseEntity<Map<String, Object>> read = get("operator", GROUP);
		assertThat(read.getStatusCode().value()).isEqualTo(200);
		assertThat(read.getBody()).isNotNull();
		assertThat(read.getBody().toString()).contains(this.election.candidateId());
		assertThat(post("operator", GROUP + "/yield").getStatusCode().value()).isEqualTo(403);
		assertThat(this.election.isLeader()).isTrue();
	}

	@Test
	void anAdministratorMovesLeadership() {
		await().atMost(TIMEOUT).until(this.election::isLeader);
		ResponseEntity<Map<String, Object>> yielded = post("admin", GROUP + "/yield");
		assertThat(yielded.getStatusCode().value()).isEqualTo(200);
		assertThat(yielded.getBody()).containsEntry("outcome", "yielded");
	}

	@Test
	void theSnippetOnTheSecurityPageIsTheConfigurationThisTestRuns() throws IOException {
		String source = Files
			.readString(Path.of("src/test/java/io/github/leaderelection/security/LeaderElectionEndpointSecurity.java"));
		String snippet = source.substring(source.indexOf("import ")).replace("\t", "    ");
		assertThat(Files.readString(Path.of("../docs/security.md"))).contains("```java\n" + snippet + "```\n");
	}

	private ResponseEntity<Map<String, Object>> get(String user, String path) {
		return client(user).get().uri(path).retrieve().onStatus(HttpStatusCode::isError, (request, response) -> {
		}).toEntity(JSON);
	}

	private ResponseEntity<Map<String, Object>> post(String user, String path) {
		return client(user).post()
			.uri(path)
			.contentType(MediaType.APPLICATION_JSON)
			.retrieve()
			.onStatus(HttpStatusCode::isError, (request, response) -> {
			})
			.toEntity(JSON);
	}

	private RestClient client(String user) {
		RestClient.Builder builder = RestClient.builder().baseUrl("http://localhost:" + this.port);
		if (user != null) {
			builder.defaultHeaders((headers) -> headers.setBasicAuth(user, user + "-password"));
		}
		return builder.defaultHeader(HttpHeaders.ACCEPT, "application/json").build();
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Users {

		@Bean
		InMemoryUserDetailsManager users() {
			return new InMemoryUserDetailsManager(
					User.withUsername("operator").password("{noop}operator-password").roles("OPERATOR").build(),
					User.withUsername("admin").password("{noop}admin-password").roles("ADMIN").build());
		}

	}

}
