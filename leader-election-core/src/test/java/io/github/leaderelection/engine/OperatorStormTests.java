package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.engine.TestEngines.Candidate;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An operator who forces leaders, yields and forces re-elections quickly, through either
 * instance, names each candidate in terms it never acquired again and again: that must
 * not be taken for another process using its candidate id. On virtual time.
 */
class OperatorStormTests {

	private final VirtualElectionScheduler time = new VirtualElectionScheduler();

	@Test
	void aStormOfForcesYieldsAndReelectionsRaisesNoDuplicateIdConflict() {
		InMemoryLeaseStore store = new InMemoryLeaseStore();
		try (TestEngines engines = new TestEngines(this.time)) {
			Candidate a = engines.candidate("a", store);
			Candidate b = engines.candidate("b", store);
			this.time.runDueTasks();
			List<String> conflicts = new ArrayList<>();
			for (int i = 0; i < 200; i++) {
				int call = i;
				LeaderElection election = ((i % 2 == 0) ? a : b).election();
				switch ((i / 2) % 4) {
					case 0 -> election.forceLeader("a");
					case 1 -> election.yieldLeadership();
					case 2 -> election.forceReelection();
					default -> election.forceLeader("b");
				}
				// The operator's pace: a few calls per retry period.
				this.time.advance(Duration.ofMillis(30));
				for (Candidate candidate : List.of(a, b)) {
					candidate.engine()
						.status(TestEngines.GROUP)
						.orElseThrow()
						.conflict()
						.ifPresent((conflict) -> conflicts.add(call + ": " + conflict));
				}
			}
			assertThat(conflicts).isEmpty();
			for (int step = 0; !(a.election().isLeader() || b.election().isLeader()); step++) {
				assertThat(step).as("steps of 10 ms after the storm").isLessThan(3_000);
				this.time.advance(Duration.ofMillis(10));
			}
		}
	}

}
