package io.github.leaderelection.jdbc;

import java.util.ArrayList;
import java.util.List;

import io.github.leaderelection.engine.DuplicateCandidateIdTests;
import io.github.leaderelection.engine.LeaderElectionEngine;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two processes with one candidate id on the database lease table: one stands aside, the
 * other leads, the term stops climbing.
 */
class DuplicateCandidateIdJdbcTests {

	private final List<LeaderElectionEngine> engines = new ArrayList<>();

	private ScratchTable table;

	@AfterEach
	void closeEnginesAndDropTable() {
		this.engines.forEach(LeaderElectionEngine::close);
		if (this.table != null) {
			this.table.drop();
		}
	}

	@Test
	void oneOfTwoProcessesWithOneIdStandsAsideOnMariaDb() {
		this.table = ScratchTable.create(TestDatabases.mysqlFamily());
		DuplicateCandidateIdTests.oneLeadsAndTheOtherStandsAside(this.table.store(), "orders", this.engines);
	}

	@Test
	void oneOfTwoProcessesWithOneIdStandsAsideOnPostgres() {
		this.table = ScratchTable.create(TestDatabases.postgres());
		DuplicateCandidateIdTests.oneLeadsAndTheOtherStandsAside(this.table.store(), "orders", this.engines);
	}

}
