package io.github.leaderelection.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import javax.sql.DataSource;

import io.github.leaderelection.engine.DuplicateCandidateIdTests;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.testing.TestDatabases;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two processes with one candidate id on the database lease table: one stands aside, the
 * other leads, the term stops climbing.
 */
class DuplicateCandidateIdJdbcTests {

	private final List<LeaderElectionEngine> engines = new ArrayList<>();

	private final String table = "leader_election_test_"
			+ UUID.randomUUID().toString().replace("-", "").substring(0, 12);

	private DataSource dataSource;

	@AfterEach
	void closeEnginesAndDropTable() throws SQLException {
		this.engines.forEach(LeaderElectionEngine::close);
		if (this.dataSource != null) {
			try (Connection connection = this.dataSource.getConnection();
					Statement statement = connection.createStatement()) {
				statement.execute("DROP TABLE IF EXISTS " + this.table);
				statement.execute("DROP TABLE IF EXISTS " + this.table + "_candidates");
				statement.execute("DROP TABLE IF EXISTS " + this.table + "_runs");
			}
		}
	}

	@Test
	void oneOfTwoProcessesWithOneIdStandsAsideOnMariaDb() {
		DuplicateCandidateIdTests.oneLeadsAndTheOtherStandsAside(store(TestDatabases.mysqlFamily()), "orders",
				this.engines);
	}

	@Test
	void oneOfTwoProcessesWithOneIdStandsAsideOnPostgres() {
		DuplicateCandidateIdTests.oneLeadsAndTheOtherStandsAside(store(TestDatabases.postgres()), "orders",
				this.engines);
	}

	private JdbcLeaseStore store(DataSource dataSource) {
		this.dataSource = dataSource;
		JdbcLeaseStore store = new JdbcLeaseStore(dataSource, this.table);
		store.createTableIfMissing();
		return store;
	}

}
