package io.github.leaderelection.quickstart;

import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.w3c.dom.Document;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

/**
 * The README's Quick start, run as written: an application made of its dependency, its
 * {@code application.yml} for a store and its Java class, compiled against this build's
 * artifacts, started twice; one instance leads and dispatches, the other stays quiet and
 * takes over when the leader stops.
 */
class QuickStartTests {

	private static final Path README = Path.of(System.getProperty("quickstart.readme", "../README.md"));

	// The Quick start's MariaDB row names a server of the user's; the test runs it on the
	// local one.
	private static final String MARIADB_PLACEHOLDER = "db-host:3306/app";

	private static final String MARIADB_LOCAL = "127.0.0.1:3306/test";

	private static final Duration STARTUP = Duration.ofSeconds(60);

	private static final Pattern LEADING = Pattern.compile("Now leading group (\\S+) in term (\\d+)");

	private static final String DISPATCHING = "Dispatching as leader in term ";

	// Unique per run, so that concurrent runs on one database do not share a lease row.
	private final String group = "quick-start-" + UUID.randomUUID().toString().substring(0, 8);

	private final List<Process> instances = new ArrayList<>();

	private String mariaDbUrl;

	@AfterEach
	void stopInstances() throws Exception {
		for (Process instance : this.instances) {
			instance.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
		}
		if (this.mariaDbUrl != null) {
			try (Connection connection = DriverManager.getConnection(this.mariaDbUrl, "root", "");
					PreparedStatement delete = connection
						.prepareStatement("DELETE FROM leader_election WHERE group_name = ?")) {
				delete.setString(1, this.group);
				delete.executeUpdate();
			}
		}
	}

	@Test
	void dependencySnippetsNameTheStarterOfThisBuild() throws Exception {
		QuickStart quickStart = QuickStart.read(README);
		Document pom = DocumentBuilderFactory.newInstance()
			.newDocumentBuilder()
			.parse(new ByteArrayInputStream(quickStart.block("pom").getBytes(StandardCharsets.UTF_8)));
		String coordinates = String.join(":", text(pom, "groupId"), text(pom, "artifactId"), text(pom, "version"));
		assertThat(coordinates).isEqualTo("io.github.leaderelection:leader-election-spring-boot-starter:"
				+ System.getProperty("quickstart.starter-version"));
		assertThat(quickStart.block("gradle")).contains("implementation(\"" + coordinates + "\")");
		assertOnClassPath(List.of("leader-election-spring-boot-starter", "spring-boot-starter-actuator"));
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "h2", "mariadb" })
	void oneOfTwoInstancesLeadsAndTheOtherTakesOverWhenItStops(String store) throws Exception {
		QuickStart quickStart = QuickStart.read(README);
		assertOnClassPath(quickStart.artifactsOfRow(store.equals("h2") ? "H2" : "MariaDB"));
		Path directory = Files.createDirectories(Path.of("target", "quick-start", store + "-" + this.group));
		String mainClass = compile(quickStart.block("java"), directory.resolve("classes"));
		List<String> arguments = new ArrayList<>(List.of("--spring.application.name=" + this.group));
		String storeYaml = quickStart.block("application-yml:" + store);
		if (store.equals("mariadb")) {
			assertThat(storeYaml).as("the MariaDB row's URL").contains(MARIADB_PLACEHOLDER);
			storeYaml = storeYaml.replace(MARIADB_PLACEHOLDER, MARIADB_LOCAL);
			arguments.addAll(List.of("--spring.datasource.username=root", "--spring.datasource.password="));
			this.mariaDbUrl = "jdbc:mariadb://" + MARIADB_LOCAL;
			assertMariaDbAnswers();
		}
		// Both instances start in this directory and read ./application.yml from it, as a
		// user's do;
		// for H2 they also share ./data/app there.
		Files.writeString(directory.resolve("application.yml"),
				storeYaml + "---\n" + quickStart.block("application-yml:actuator"));

		Instance a = start(directory, mainClass, "a", arguments);
		Instance b = start(directory, mainClass, "b", arguments);
		await().atMost(STARTUP).until(() -> a.log().contains(DISPATCHING) || b.log().contains(DISPATCHING));
		Instance leader = a.log().contains(DISPATCHING) ? a : b;
		Instance follower = (leader == a) ? b : a;
		long firstTerm = leadingTerm(leader);
		await().atMost(STARTUP).until(() -> follower.log().contains("Started "));
		await().atMost(STARTUP).untilAsserted(() -> assertThat(leader.health()).contains("\"role\":\"LEADER\""));
		assertThat(follower.health()).contains("\"role\":\"FOLLOWER\"");
		// The follower schedules dispatch() too; the gate keeps it from running while the
		// other leads.
		int dispatchesBefore = leader.count(DISPATCHING);
		await().during(Duration.ofSeconds(3))
			.atMost(Duration.ofSeconds(10))
			.until(() -> !follower.log().contains(DISPATCHING) && !follower.log().contains("Now leading"));
		assertThat(leader.count(DISPATCHING)).as("dispatches while the other stood by").isGreaterThan(dispatchesBefore);

		leader.process().destroy();
		assertThat(leader.process().waitFor(30, TimeUnit.SECONDS)).as("graceful stop").isTrue();
		await().atMost(STARTUP).until(() -> follower.log().contains(DISPATCHING));
		assertThat(leadingTerm(follower)).as("the new leader's term").isGreaterThan(firstTerm);
	}

	private long leadingTerm(Instance instance) throws IOException {
		Matcher matcher = LEADING.matcher(instance.log());
		assertThat(matcher.find()).as("%s logs \"Now leading group ...\"", instance.name()).isTrue();
		assertThat(matcher.group(1)).isEqualTo(this.group);
		return Long.parseLong(matcher.group(2));
	}

	private static String compile(String source, Path classes) throws IOException {
		Matcher packageName = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE).matcher(source);
		Matcher className = Pattern.compile("^public class (\\w+)", Pattern.MULTILINE).matcher(source);
		assertThat(packageName.find() && className.find()).as("the Java block declares a package and a public class")
			.isTrue();
		String mainClass = packageName.group(1) + "." + className.group(1);
		Path file = classes.getParent().resolve("src").resolve(mainClass.replace('.', '/') + ".java");
		Files.createDirectories(file.getParent());
		Files.createDirectories(classes);
		Files.writeString(file, source);
		JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
		StringWriter errors = new StringWriter();
		boolean compiled = compiler
			.getTask(errors, null, null,
					List.of("--release", "17", "-classpath", testClassPath(), "-d", classes.toString()), null,
					compiler.getStandardFileManager(null, null, StandardCharsets.UTF_8).getJavaFileObjects(file))
			.call();
		assertThat(compiled).as("README's Java block compiles:%n%s", errors).isTrue();
		return mainClass;
	}

	private Instance start(Path directory, String mainClass, String name, List<String> arguments) throws IOException {
		int port;
		try (ServerSocket socket = new ServerSocket(0)) {
			port = socket.getLocalPort();
		}
		// The JIT's first tier only: two short-lived JVMs start faster on a busy machine.
		List<String> command = new ArrayList<>(
				List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
						"-XX:TieredStopAtLevel=1", "-cp",
						testClassPath() + File.pathSeparator + directory.resolve("classes").toAbsolutePath(), mainClass,
						"--server.port=" + port));
		command.addAll(arguments);
		Path log = directory.resolve(name + ".log").toAbsolutePath();
		Process process = new ProcessBuilder(command).directory(directory.toFile())
			.redirectErrorStream(true)
			.redirectOutput(log.toFile())
			.start();
		this.instances.add(process);
		return new Instance(name, process, log, port);
	}

	private void assertMariaDbAnswers() {
		try (Connection connection = DriverManager.getConnection(this.mariaDbUrl, "root", "")) {
			connection.isValid(5);
		}
		catch (SQLException ex) {
			fail("No MariaDB answered at " + this.mariaDbUrl + " (" + ex.getMessage() + "). Run MariaDB or MySQL on "
					+ "127.0.0.1:3306 with a database test and a user root without password.", ex);
		}
	}

	private static void assertOnClassPath(List<String> artifactIds) {
		List<String> entries = List.of(testClassPath().split(File.pathSeparator));
		for (String artifactId : artifactIds) {
			// A jar from the repository or the reactor, or a reactor module's classes
			// (mvn test).
			Pattern artifact = Pattern.compile(".*[/\\\\](" + Pattern.quote(artifactId) + "-\\d[^/\\\\]*\\.jar|"
					+ Pattern.quote(artifactId) + "[/\\\\]target[/\\\\]classes)");
			assertThat(entries).as("README names %s; add it to this module's test dependencies", artifactId)
				.anyMatch((entry) -> artifact.matcher(entry).matches());
		}
	}

	private static String testClassPath() {
		// Under Surefire, java.class.path may name only its booter jar.
		return System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
	}

	private static String text(Document document, String tag) {
		return document.getElementsByTagName(tag).item(0).getTextContent().strip();
	}

	private record Instance(String name, Process process, Path logFile, int port) {

		/**
		 * Its output so far; if it has exited, an exception with the end of it, so that a
		 * failed startup fails the test at once rather than at the end of a wait.
		 */
		String log() throws IOException {
			String log = Files.exists(this.logFile) ? Files.readString(this.logFile) : "";
			if (!this.process.isAlive()) {
				throw new IllegalStateException(
						"Instance " + this.name + " exited with code " + this.process.exitValue()
								+ "; the end of its log:\n" + log.substring(Math.max(0, log.length() - 4000)));
			}
			return log;
		}

		int count(String text) throws IOException {
			return log().split(Pattern.quote(text), -1).length - 1;
		}

		String health() throws IOException, InterruptedException {
			HttpRequest request = HttpRequest
				.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/actuator/health"))
				.timeout(Duration.ofSeconds(5))
				.build();
			return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString()).body();
		}

	}

}
