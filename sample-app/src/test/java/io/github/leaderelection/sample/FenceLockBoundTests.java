package io.github.leaderelection.sample;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;

import javax.sql.DataSource;

import io.github.leaderelection.Leadership;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The sample's fence pattern on the real databases of its profiles: a stale leader whose
 * link hangs right after it took the fence row's lock holds the new leader's write up
 * only until the database ends the stale transaction (3 s), not for as long as the link
 * hangs (issue 17).
 */
class FenceLockBoundTests {

	/** The idle-transaction timeout of the profiles. */
	private static final Duration IDLE_TRANSACTION_TIMEOUT = Duration.ofSeconds(3);

	@Nested
	@SpringBootTest(properties = { "sample.job-interval=1h", "spring.application.name=fence-lock-bound-tests" })
	@ActiveProfiles("mariadb")
	class OnMariaDb extends Scenario {

	}

	@Nested
	@SpringBootTest(properties = { "sample.job-interval=1h", "spring.application.name=fence-lock-bound-tests" })
	@ActiveProfiles("postgres")
	class OnPostgres extends Scenario {

	}

	abstract static class Scenario {

		@Autowired
		private DataSource dataSource;

		@Autowired
		private JobRunLog log;

		@Test
		void aWriterThatHangsMidTransactionHoldsTheNewLeaderUpOnlyUntilTheDatabaseEndsIt() throws Exception {
			String group = "fence-" + UUID.randomUUID();
			assertThat(this.log.record(leadership(group, "old-leader", 1))).isTrue();
			// A connection of the application's pool, with the profile's session
			// settings.
			try (Connection stale = this.dataSource.getConnection()) {
				stale.setAutoCommit(false);
				try (PreparedStatement fence = stale
					.prepareStatement("UPDATE sample_fence SET max_term = ? WHERE group_name = ? AND max_term <= ?")) {
					fence.setLong(1, 1);
					fence.setString(2, group);
					fence.setLong(3, 1);
					assertThat(fence.executeUpdate()).isOne();
				}
				// From here on the stale writer sends nothing: its link hangs.
				long start = System.nanoTime();
				boolean accepted = this.log.record(leadership(group, "new-leader", 2));
				Duration heldUp = Duration.ofNanos(System.nanoTime() - start);
				assertThat(accepted).isTrue();
				assertThat(heldUp).as("the new leader waited for the stale writer's lock")
					.isGreaterThan(IDLE_TRANSACTION_TIMEOUT.minusSeconds(1))
					.as("and only until the database ended the stale transaction")
					.isLessThan(IDLE_TRANSACTION_TIMEOUT.plusSeconds(3));
				// The database ended the stale transaction: its writes never land.
				assertThatExceptionOfType(SQLException.class).isThrownBy(() -> {
					try (PreparedStatement append = stale.prepareStatement(
							"INSERT INTO sample_job_run (group_name, candidate_id, term, ran_at) VALUES (?, ?, ?, CURRENT_TIMESTAMP(3))")) {
						append.setString(1, group);
						append.setString(2, "old-leader");
						append.setLong(3, 1);
						append.executeUpdate();
					}
					stale.commit();
				});
			}
		}

		private static Leadership leadership(String group, String candidateId, long term) {
			return new Leadership(group, candidateId, term, (t) -> true);
		}

	}

}
