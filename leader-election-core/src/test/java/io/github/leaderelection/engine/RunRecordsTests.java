package io.github.leaderelection.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import io.github.leaderelection.RunRecords;
import io.github.leaderelection.engine.TestEngines.Candidate;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.RunRecordStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.github.leaderelection.engine.TestEngines.GROUP;
import static io.github.leaderelection.engine.TestEngines.TIMING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link io.github.leaderelection.LeaderElection#runRecords()}: claims fenced by the
 * lease the group's state holds at the instant of the claim, on virtual time.
 */
class RunRecordsTests {

	private static final Duration STEP = Duration.ofMillis(10);

	private static final Duration WAIT = Duration.ofSeconds(60);

	private static final Instant STARTED = Instant.parse("2026-11-28T02:00:00Z");

	private static final long TICK = STARTED.toEpochMilli();

	private final VirtualElectionScheduler time = new VirtualElectionScheduler();

	private final InMemoryLeaseStore store = new InMemoryLeaseStore(this.time::nanoTime);

	private final TestEngines engines = new TestEngines(this.time);

	@AfterEach
	void closeEngines() {
		this.engines.close();
	}

	@Test
	void theLeaderClaimsEachTickOnceInItsTermAndRecordsHowItEnded() {
		Candidate a = this.engines.candidate("a", this.store);
		this.time.advanceUntil(a.election()::isLeader, STEP, WAIT);
		RunRecords runs = a.election().runRecords().orElseThrow();
		RunRecord run = runs.claim("report", TICK, STARTED, Duration.ZERO).orElseThrow();
		assertThat(run.group()).isEqualTo(GROUP);
		assertThat(run.holder()).isEqualTo("a");
		assertThat(run.term()).isEqualTo(a.election().leadership().orElseThrow().term());
		assertThat(run.outcome()).isEqualTo(RunOutcome.RUNNING);
		assertThat(runs.claim("report", TICK, STARTED, Duration.ZERO)).as("the same tick again").isEmpty();
		assertThat(runs.finish(run, RunOutcome.SUCCEEDED, STARTED.plusSeconds(2))).isTrue();
		assertThat(runs.lastRun("report")).hasValueSatisfying((last) -> {
			assertThat(last.isSameRunAs(run)).isTrue();
			assertThat(last.outcome()).isEqualTo(RunOutcome.SUCCEEDED);
			assertThat(last.ended()).isEqualTo(STARTED.plusSeconds(2));
		});
	}

	@Test
	void listsTheLastRunOfEveryJobTheGroupRanInJobOrder() {
		Candidate a = this.engines.candidate("a", this.store);
		this.time.advanceUntil(a.election()::isLeader, STEP, WAIT);
		RunRecords runs = a.election().runRecords().orElseThrow();
		assertThat(runs.all()).isEmpty();
		RunRecord sweep = runs.claim("sweep", TICK, STARTED, Duration.ZERO).orElseThrow();
		RunRecord report = runs.claim("report", TICK, STARTED, Duration.ZERO).orElseThrow();
		assertThat(runs.finish(report, RunOutcome.FAILED, STARTED.plusSeconds(1))).isTrue();
		assertThat(runs.all()).containsExactly(report.endedAs(RunOutcome.FAILED, STARTED.plusSeconds(1)), sweep);
	}

	@Test
	void aFollowerClaimsNothing() {
		Candidate a = this.engines.candidate("a", this.store);
		this.time.advanceUntil(a.election()::isLeader, STEP, WAIT);
		Candidate b = this.engines.candidate("b", this.store);
		this.time.advanceUntil(() -> b.election().currentLeader().isPresent(), STEP, WAIT);
		assertThat(b.election().runRecords().orElseThrow().claim("report", TICK, STARTED, Duration.ZERO)).isEmpty();
		assertThat(a.election().runRecords().orElseThrow().lastRun("report")).isEmpty();
	}

	@Test
	void aLeaderPausedPastItsDeadlineClaimsNothingAndALaterLeaderClaimsTheTick() {
		Candidate a = this.engines.candidate("a", this.store);
		this.time.advanceUntil(a.election()::isLeader, STEP, WAIT);
		Candidate b = this.engines.candidate("b", this.store);
		this.time.pause(TIMING.renewDeadline());
		assertThat(a.election().runRecords().orElseThrow().claim("report", TICK, STARTED, Duration.ZERO))
			.as("a claim after the belief's deadline, before any thread ran")
			.isEmpty();
		this.time.advanceUntil(a.election()::isLeader, STEP, WAIT);
		a.election().yieldLeadership();
		this.time.advanceUntil(b.election()::isLeader, STEP, WAIT);
		assertThat(b.election().runRecords().orElseThrow().claim("report", TICK, STARTED, Duration.ZERO)).isPresent();
	}

	@Test
	void aStoreThatFailsIsReportedNamingTheJobAndTheGroup() {
		FailingRuns failing = new FailingRuns(this.store);
		Candidate a = this.engines.candidate("a", failing);
		this.time.advanceUntil(a.election()::isLeader, STEP, WAIT);
		assertThatExceptionOfType(LeaderElectionException.class)
			.isThrownBy(() -> a.election().runRecords().orElseThrow().claim("report", TICK, STARTED, Duration.ZERO))
			.withMessageContaining("claim tick " + TICK + " of job 'report' in group '" + GROUP + "'")
			.withMessageContaining("connection refused");
		assertThatExceptionOfType(LeaderElectionException.class)
			.isThrownBy(() -> a.election().runRecords().orElseThrow().all())
			.withMessageContaining("read the last runs of the jobs in group '" + GROUP + "'");
	}

	@Test
	void aStoreWithoutRunRecordsOffersNone() {
		Candidate a = this.engines.candidate("a", new ForwardingLeaseStore(this.store) {
		});
		assertThat(a.election().runRecords()).isEmpty();
	}

	/** The in-memory store, whose run record calls fail. */
	private static final class FailingRuns extends ForwardingLeaseStore implements RunRecordStore {

		FailingRuns(InMemoryLeaseStore store) {
			super(store);
		}

		@Override
		public Optional<RunRecord> lastRun(String group, String job, Duration timeout) {
			throw new IllegalStateException("connection refused");
		}

		@Override
		public List<RunRecord> runs(String group, Duration timeout) {
			throw new IllegalStateException("connection refused");
		}

		@Override
		public boolean claimRun(Lease lease, RunRecord run, Duration minInterval, Duration timeout) {
			throw new IllegalStateException("connection refused");
		}

		@Override
		public boolean finishRun(RunRecord ended, Duration timeout) {
			throw new IllegalStateException("connection refused");
		}

	}

}
