package io.github.leaderelection.sample;

import java.time.Duration;
import java.util.Map;

import io.github.leaderelection.LeaderElection;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.client.RestClient;

/**
 * What the tests of the sample over HTTP share: the port it listens on, its election, and
 * JSON requests whose error statuses are answers to check rather than exceptions.
 */
abstract class SampleHttpTests {

	static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {
	};

	@LocalServerPort
	private int port;

	@Autowired
	LeaderElection election;

	ResponseEntity<Map<String, Object>> get(String path) {
		return client().get().uri(path).retrieve().onStatus(HttpStatusCode::isError, (request, response) -> {
		}).toEntity(JSON);
	}

	/**
	 * Posts JSON.
	 * @param path the path
	 * @param body the body, or {@code null} for none
	 * @return the answer, whatever its status
	 */
	ResponseEntity<Map<String, Object>> post(String path, Map<String, Object> body) {
		RestClient.RequestBodySpec request = client().post().uri(path).contentType(MediaType.APPLICATION_JSON);
		if (body != null) {
			request.body(body);
		}
		return request.retrieve().onStatus(HttpStatusCode::isError, (req, res) -> {
		}).toEntity(JSON);
	}

	private RestClient client() {
		return RestClient.create("http://localhost:" + this.port);
	}

}
