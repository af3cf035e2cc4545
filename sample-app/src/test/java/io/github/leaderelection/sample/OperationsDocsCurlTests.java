package io.github.leaderelection.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Flow;

import io.github.leaderelection.LeaderElection;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code curl} commands of docs/operations.md work as written, against the sample
 * served on a random port: each is taken from the file, run as curl would send it, and
 * answered 2xx. Request bodies beyond the endpoint's limit are refused before they are
 * read.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.datasource.url=jdbc:h2:mem:sample-docs-curl-test;DB_CLOSE_DELAY=-1",
				"leader-election.jdbc.allow-in-memory-database=true", "leader-election.lease-duration=3s",
				"leader-election.renew-deadline=2s", "leader-election.retry-period=500ms",
				"leader-election.balance.enabled=true", "management.endpoint.leaderelection.access=unrestricted" })
class OperationsDocsCurlTests {

	private static final Path OPERATIONS = Path.of("..", "docs", "operations.md");

	private final HttpClient http = HttpClient.newHttpClient();

	@LocalServerPort
	private int port;

	@Autowired
	private LeaderElection election;

	@Test
	void theDocumentedCurlCommandsAnswer2xx() throws Exception {
		List<List<String>> commands = curlCommands(Files.readString(OPERATIONS));
		assertThat(commands).as("curl commands of the endpoint in %s", OPERATIONS)
			.filteredOn((command) -> command.stream().anyMatch((word) -> word.contains("/actuator/leaderelection")))
			.hasSizeGreaterThanOrEqualTo(4);
		await().atMost(SampleHttpTests.TIMEOUT).until(this.election::isLeader);
		for (List<String> command : commands) {
			HttpResponse<String> response = this.http.send(asCurlSendsIt(command), BodyHandlers.ofString());
			assertThat(response.statusCode()).as("%s answered %s", String.join(" ", command), response.body())
				.isBetween(200, 299);
		}
	}

	@Test
	void refusesABodyLargerThanTheLimitBeforeReadingIt() throws Exception {
		String url = "http://localhost:" + this.port + "/actuator/leaderelection/sample-scheduler/force-leader";
		String large = "{\"candidateId\": \"" + "a".repeat(100_000) + "\"}";
		HttpResponse<String> declared = this.http.send(HttpRequest.newBuilder(URI.create(url))
			.header("Content-Type", "application/json")
			.POST(BodyPublishers.ofString(large))
			.build(), BodyHandlers.ofString());
		assertThat(declared.statusCode()).isEqualTo(413);
		assertThat(declared.body()).contains("leader-election.endpoint.max-request-size");
		HttpResponse<String> chunked = this.http.send(HttpRequest.newBuilder(URI.create(url))
			.header("Content-Type", "application/json")
			.POST(withoutLength(large))
			.build(), BodyHandlers.ofString());
		assertThat(chunked.statusCode()).isEqualTo(413);
	}

	/**
	 * The curl commands of the file's shell blocks, each as its words, lines ending with
	 * a backslash joined.
	 */
	static List<List<String>> curlCommands(String markdown) {
		List<List<String>> commands = new ArrayList<>();
		boolean inShell = false;
		StringBuilder command = new StringBuilder();
		for (String line : markdown.split("\n", -1)) {
			if (line.startsWith("```")) {
				inShell = !inShell && line.equals("```bash");
				continue;
			}
			if (!inShell) {
				continue;
			}
			String trimmed = line.strip();
			if (command.isEmpty() && !trimmed.startsWith("curl ")) {
				continue;
			}
			if (trimmed.endsWith("\\")) {
				command.append(trimmed, 0, trimmed.length() - 1).append(' ');
				continue;
			}
			command.append(trimmed);
			commands.add(words(command.toString()));
			command.setLength(0);
		}
		return commands;
	}

	/** A line split into words as a POSIX shell does, with single and double quotes. */
	static List<String> words(String line) {
		List<String> words = new ArrayList<>();
		StringBuilder word = null;
		char quote = 0;
		for (char c : line.toCharArray()) {
			if (quote != 0) {
				if (c == quote) {
					quote = 0;
				}
				else {
					word.append(c);
				}
			}
			else if (c == '\'' || c == '"') {
				quote = c;
				word = (word != null) ? word : new StringBuilder();
			}
			else if (c == '#' && word == null) {
				break;
			}
			else if (Character.isWhitespace(c)) {
				if (word != null) {
					words.add(word.toString());
					word = null;
				}
			}
			else {
				word = (word != null) ? word : new StringBuilder();
				word.append(c);
			}
		}
		assertThat((int) quote).as("unclosed quote in %s", line).isZero();
		if (word != null) {
			words.add(word.toString());
		}
		return words;
	}

	/**
	 * The request curl sends for these words: {@code -X} names the method, {@code -H}
	 * adds a header, {@code -d} sends data (and makes it a POST of
	 * {@code application/x-www-form-urlencoded} unless a Content-Type is given); no body
	 * and no Content-Type otherwise. Any other option fails the test, so that the
	 * documentation uses only what is checked here.
	 */
	private HttpRequest asCurlSendsIt(List<String> command) {
		assertThat(command.get(0)).isEqualTo("curl");
		String method = null;
		String url = null;
		String data = null;
		Map<String, String> headers = new LinkedHashMap<>();
		for (Iterator<String> words = command.subList(1, command.size()).iterator(); words.hasNext();) {
			String word = words.next();
			switch (word) {
				case "-X" -> method = words.next();
				case "-H" -> {
					String[] header = words.next().split(":", 2);
					headers.put(header[0].strip(), header[1].strip());
				}
				case "-d" -> data = words.next();
				default -> {
					assertThat(word).as("curl option not understood by this test in %s", command).doesNotStartWith("-");
					url = word;
				}
			}
		}
		assertThat(url).as("URL of %s", command).isNotNull();
		String address = url.replace("localhost:8080", "localhost:" + this.port);
		if (!address.startsWith("http")) {
			address = "http://" + address;
		}
		if (data != null) {
			headers.putIfAbsent("Content-Type", "application/x-www-form-urlencoded");
		}
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(address));
		headers.forEach(request::header);
		String verb = (method != null) ? method : ((data != null) ? "POST" : "GET");
		return request.method(verb, (data != null) ? BodyPublishers.ofString(data) : BodyPublishers.noBody()).build();
	}

	/** A body sent in chunks, its length not declared. */
	private static HttpRequest.BodyPublisher withoutLength(String body) {
		HttpRequest.BodyPublisher bytes = BodyPublishers.ofString(body, StandardCharsets.UTF_8);
		return new HttpRequest.BodyPublisher() {

			@Override
			public long contentLength() {
				return -1;
			}

			@Override
			public void subscribe(Flow.Subscriber<? super ByteBuffer> subscriber) {
				bytes.subscribe(subscriber);
			}

		};
	}

}
