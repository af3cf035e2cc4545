package io.github.leaderelection.jdbc;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import java.util.stream.Stream;

import javax.sql.DataSource;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.testing.OverlapMonitor;
import io.github.leaderelection.testing.TestDatabases;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Elections of two engines on a lease table whose row of the group is deleted, or whose
 * term is lowered, by hand while one of them leads (the store kit
 * {@code LostStoreDataContractTests} covers a table emptied): beliefs never overlap, and
 * terms only grow and are never used twice.
 */
class JdbcElectionDataLossTests {

	private static final ElectionTiming FAST = new ElectionTiming(Duration.ofMillis(1500), Duration.ofMillis(1000),
			Duration.ofMillis(200));

	private static final String GROUP = "orders";

	private final List<Long> grantedTerms = new CopyOnWriteArrayList<>();

	static Stream<Arguments> databases() {
		return Stream.of(Arguments.of(Named.of("H2", (Supplier<DataSource>) TestDatabases::h2)),
				Arguments.of(Named.of("MariaDB", (Supplier<DataSource>) TestDatabases::mysqlFamily)),
				Arguments.of(Named.of("PostgreSQL", (Supplier<DataSource>) TestDatabases::postgres)));
	}

	@ParameterizedTest
	@MethodSource("databases")
	void rowDeletedWhileLeadingGivesNoOverlapAndGreaterTerms(Supplier<DataSource> database) throws Exception {
		loseWhileLeading(database.get(), "DELETE FROM {table} WHERE group_name = '" + GROUP + "'");
	}

	@ParameterizedTest
	@MethodSource("databases")
	void termLoweredWhileLeadingGivesNoOverlapAndGreaterTerms(Supplier<DataSource> database) throws Exception {
		loseWhileLeading(database.get(), "UPDATE {table} SET term = -7, holder_id = NULL, lease_until_ms = 0");
	}

	private void loseWhileLeading(DataSource dataSource, String loss) throws Exception {
		ScratchTable table = ScratchTable.create(dataSource);
		try (Node a = new Node(table, "a"); Node b = new Node(table, "b")) {
			a.engine.start();
			await().atMost(Duration.ofSeconds(10)).until(a.election::isLeader);
			b.engine.start();
			await().atMost(Duration.ofSeconds(10)).until(() -> b.election.currentLeader().isPresent());
			int grantsBefore = this.grantedTerms.size();
			OverlapMonitor monitor = new OverlapMonitor(List.of(a.election, b.election), LeaderElection::isLeader);
			try {
				Thread.sleep(300);
				ScratchTable.execute(dataSource, loss.replace("{table}", table.name()));
				await().atMost(Duration.ofSeconds(30)).until(() -> this.grantedTerms.size() > grantsBefore);
				Thread.sleep(500);
			}
			finally {
				monitor.close();
			}
			assertThat(monitor.samples()).isGreaterThan(1000);
			assertThat(monitor.overlaps()).as("instants with two leaders").isZero();
			assertThat(this.grantedTerms).isSorted()
				.doesNotHaveDuplicates()
				.allSatisfy((term) -> assertThat(term).isPositive());
		}
		finally {
			table.drop();
		}
	}

	/** One candidate process: its own store and engine. */
	private final class Node implements AutoCloseable {

		final LeaderElectionEngine engine;

		final LeaderElection election;

		Node(ScratchTable table, String candidateId) {
			this.engine = LeaderElectionEngine.builder(table.store())
				.candidateId(candidateId)
				.timing(FAST)
				.listener(new LeaderElectionListener() {
					@Override
					public void granted(Leadership leadership) {
						JdbcElectionDataLossTests.this.grantedTerms.add(leadership.term());
					}
				})
				.build();
			this.election = this.engine.join(GROUP);
		}

		@Override
		public void close() {
			this.engine.close();
		}

	}

}
