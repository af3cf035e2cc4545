package io.github.leaderelection.sample;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two sample-app JVMs elect through the local MariaDB: one leads, a graceful stop hands
 * over within about a retry period, a {@code kill -9} fails over after the lease, and the
 * fenced job rows show terms that never interleave. It runs twice: on the ordinary
 * context, and on the context that Spring's AOT processing generated at build time
 * ({@code -Dspring.aot.enabled=true}), so that both elect and gate alike.
 */
class TwoInstancesIT {

	private static final String URL = System.getenv()
		.getOrDefault("LEADER_ELECTION_TEST_MYSQL_URL", "jdbc:mariadb://127.0.0.1:3306/test?user=root&password=");

	private static final Duration LEASE = Duration.ofSeconds(4);

	private static final Duration RETRY = Duration.ofMillis(500);

	private final String group = "it-" + UUID.randomUUID().toString().substring(0, 8);

	private final List<Process> processes = new ArrayList<>();

	@AfterEach
	void stopInstancesAndCleanUp() throws Exception {
		for (Process process : this.processes) {
			process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
		}
		try (Connection connection = connect()) {
			for (String table : List.of("sample_job_run", "sample_fence", "leader_election")) {
				try (PreparedStatement delete = connection
					.prepareStatement("DELETE FROM " + table + " WHERE group_name = ?")) {
					delete.setString(1, this.group);
					delete.executeUpdate();
				}
			}
		}
	}

	private boolean aot;

	@ParameterizedTest(name = "aot={0}")
	@ValueSource(booleans = { false, true })
	void oneLeaderGracefulHandoverAndCrashFailover(boolean aot) throws Exception {
		this.aot = aot;
		Process a = start("it-a");
		await().atMost(Duration.ofSeconds(90)).until(() -> "it-a".equals(holder()) && runsBy("it-a") > 0);
		assertThat(logOf("it-a").contains("Starting AOT-processed SampleApplication")).as("ran on the AOT context")
			.isEqualTo(aot);
		Process b = start("it-b");
		await().atMost(Duration.ofSeconds(90)).until(() -> logOf("it-b").contains("Started SampleApplication"));
		Thread.sleep(LEASE.toMillis());
		assertThat(holder()).isEqualTo("it-a");
		assertThat(runsBy("it-b")).isZero();

		// Graceful stop: the lease is released, so b does not wait for it to expire.
		long stoppedAt = System.nanoTime();
		a.destroy();
		assertThat(a.waitFor(60, TimeUnit.SECONDS)).isTrue();
		await().atMost(Duration.ofSeconds(30)).until(() -> runsBy("it-b") > 0);
		Duration handover = Duration.ofNanos(System.nanoTime() - stoppedAt);
		assertThat(handover).as("graceful handover").isLessThan(LEASE);

		// Crash: nothing is released; the follower takes over after the lease.
		start("it-a2");
		await().atMost(Duration.ofSeconds(90)).until(() -> logOf("it-a2").contains("Started SampleApplication"));
		long killedAt = System.nanoTime();
		b.destroyForcibly();
		await().atMost(Duration.ofSeconds(60)).until(() -> "it-a2".equals(holder()) && runsBy("it-a2") > 0);
		Duration failover = Duration.ofNanos(System.nanoTime() - killedAt);
		assertThat(failover).as("crash failover").isLessThan(LEASE.plus(RETRY.multipliedBy(2)).plusSeconds(10));

		assertTermsNeverInterleave();
	}

	private void assertTermsNeverInterleave() throws SQLException {
		List<long[]> runs = new ArrayList<>();
		List<String> owners = new ArrayList<>();
		try (Connection connection = connect();
				PreparedStatement select = connection.prepareStatement(
						"SELECT term, candidate_id FROM sample_job_run WHERE group_name = ? ORDER BY ran_at, term")) {
			select.setString(1, this.group);
			try (ResultSet rows = select.executeQuery()) {
				while (rows.next()) {
					runs.add(new long[] { rows.getLong(1) });
					owners.add(rows.getString(2));
				}
			}
		}
		assertThat(runs).hasSizeGreaterThan(3);
		for (int i = 1; i < runs.size(); i++) {
			assertThat(runs.get(i)[0]).as("term of run %d after term %d", i, runs.get(i - 1)[0])
				.isGreaterThanOrEqualTo(runs.get(i - 1)[0]);
			if (runs.get(i)[0] == runs.get(i - 1)[0]) {
				assertThat(owners.get(i)).as("owner of term %d", runs.get(i)[0]).isEqualTo(owners.get(i - 1));
			}
		}
		assertThat(owners).contains("it-a", "it-b", "it-a2");
	}

	private Process start(String candidateId) throws IOException {
		Path log = Path.of("target", "it-logs", this.group + "-" + candidateId + ".log");
		Files.createDirectories(log.getParent());
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		// Most of the run waits for instances to start: the client compiler alone and the
		// serial collector start them sooner, and keep two instances from competing for a
		// small machine's cores with compiler and GC threads. Neither bears on the
		// election.
		List<String> command = List.of(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
				"-Dspring.aot.enabled=" + this.aot, "-jar", System.getProperty("sample.jar", "target/sample-app.jar"),
				"--spring.profiles.active=mariadb", "--server.port=0", "--leader-election.group=" + this.group,
				"--leader-election.candidate-id=" + candidateId,
				"--leader-election.lease-duration=" + LEASE.toMillis() + "ms", "--leader-election.renew-deadline=3s",
				"--leader-election.retry-period=" + RETRY.toMillis() + "ms", "--sample.job-interval=200ms");
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		this.processes.add(process);
		return process;
	}

	private String logOf(String candidateId) throws IOException {
		File log = Path.of("target", "it-logs", this.group + "-" + candidateId + ".log").toFile();
		return log.exists() ? Files.readString(log.toPath()) : "";
	}

	private String holder() throws SQLException {
		try (Connection connection = connect();
				PreparedStatement select = connection
					.prepareStatement("SELECT holder_id FROM leader_election WHERE group_name = ?")) {
			select.setString(1, this.group);
			try (ResultSet rows = select.executeQuery()) {
				return rows.next() ? rows.getString(1) : null;
			}
		}
		catch (SQLException ex) {
			return null; // the table appears when the first instance starts
		}
	}

	private int runsBy(String candidateId) throws SQLException {
		try (Connection connection = connect();
				PreparedStatement select = connection.prepareStatement(
						"SELECT COUNT(*) FROM sample_job_run WHERE group_name = ? AND candidate_id = ?")) {
			select.setString(1, this.group);
			select.setString(2, candidateId);
			try (ResultSet rows = select.executeQuery()) {
				rows.next();
				return rows.getInt(1);
			}
		}
		catch (SQLException ex) {
			return 0;
		}
	}

	private static Connection connect() throws SQLException {
		return DriverManager.getConnection(URL);
	}

}
