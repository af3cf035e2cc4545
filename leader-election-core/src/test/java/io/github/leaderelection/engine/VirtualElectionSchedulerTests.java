package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class VirtualElectionSchedulerTests {

	private final VirtualElectionScheduler time = new VirtualElectionScheduler(0);

	private final List<String> ran = new CopyOnWriteArrayList<>();

	@Test
	void runsTasksInTheOrderTheyFallDueEachAtItsOwnInstant() {
		this.time.schedule(() -> this.ran.add("b@" + this.time.nanoTime()), 200);
		this.time.schedule(() -> this.ran.add("a@" + this.time.nanoTime()), 100);
		this.time.execute(() -> this.ran.add("now@" + this.time.nanoTime()));
		this.time.schedule(() -> this.ran.add("late@" + this.time.nanoTime()), 1_000);
		assertThat(this.ran).isEmpty(); // never on the caller's thread
		this.time.advance(Duration.ofNanos(500));
		assertThat(this.ran).containsExactly("now@0", "a@100", "b@200");
		assertThat(this.time.nanoTime()).isEqualTo(500);
		assertThat(this.time.pendingTasks()).isOne();
	}

	@Test
	void runsWhatTheTasksScheduleWhenItFallsDueWithinTheAdvance() {
		this.time.schedule(() -> {
			this.ran.add("first");
			this.time.schedule(() -> this.ran.add("second@" + this.time.nanoTime()), 50);
		}, 10);
		this.time.advance(Duration.ofNanos(100));
		assertThat(this.ran).containsExactly("first", "second@60");
	}

	@Test
	void cancelledTasksDoNotRun() {
		Future<?> cancelled = this.time.schedule(() -> this.ran.add("cancelled"), 10);
		this.time.schedule(() -> this.ran.add("kept"), 10);
		cancelled.cancel(false);
		this.time.advance(Duration.ofNanos(10));
		assertThat(this.ran).containsExactly("kept");
	}

	@Test
	void aPauseMovesTheClockAndTheTasksDueMeanwhileRunLate() {
		this.time.schedule(() -> this.ran.add("due@100 ran@" + this.time.nanoTime()), 100);
		this.time.pause(Duration.ofNanos(1_000));
		assertThat(this.ran).isEmpty();
		assertThat(this.time.nanoTime()).isEqualTo(1_000);
		this.time.runDueTasks();
		assertThat(this.ran).containsExactly("due@100 ran@1000");
	}

	/** The example of docs/operations.md, with the default timing. */
	@Test
	void drivesTwoEnginesThroughAPauseAsTheOperationsGuideShows() {
		InMemoryLeaseStore store = new InMemoryLeaseStore(this.time::nanoTime);
		try (LeaderElectionEngine a = LeaderElectionEngine.builder(store).candidateId("a").scheduler(this.time).build();
				LeaderElectionEngine b = LeaderElectionEngine.builder(store)
					.candidateId("b")
					.scheduler(this.time)
					.build()) {
			LeaderElection orders = a.join("orders");
			LeaderElection other = b.join("orders");
			a.start();
			b.start();
			this.time.advance(Duration.ofMillis(100));
			assertThat(orders.isLeader() ^ other.isLeader()).isTrue();
			long term = orders.leadership().or(other::leadership).orElseThrow().term();
			this.time.pause(Duration.ofSeconds(20));
			assertThat(orders.isLeader() || other.isLeader()).isFalse();
			this.time.advance(Duration.ofSeconds(5));
			assertThat(orders.isLeader() ^ other.isLeader()).isTrue();
			assertThat(orders.leadership().or(other::leadership).orElseThrow().term()).isGreaterThan(term);
		}
	}

	@Test
	void reportsATaskThatFailedAndOneThatNeverLetsTimePass() {
		this.time.execute(() -> {
			throw new IllegalArgumentException("bug");
		});
		assertThatIllegalStateException().isThrownBy(this.time::runDueTasks)
			.withCauseInstanceOf(IllegalArgumentException.class);
		// A limit of a thousand tasks rather than a million: the same check, sooner.
		VirtualElectionScheduler limited = new VirtualElectionScheduler(0, 1_000);
		Runnable[] again = new Runnable[1];
		again[0] = () -> limited.execute(again[0]);
		limited.execute(again[0]);
		assertThatIllegalStateException().isThrownBy(limited::runDueTasks)
			.withMessageContaining("reschedules itself without delay");
		assertThatIllegalArgumentException().isThrownBy(() -> this.time.advance(Duration.ofNanos(-1)));
	}

	@Test
	void aTaskThatAdvancesTheClockRunsWhatFallsDueMeanwhileNestedInIt() {
		this.time.schedule(() -> {
			this.ran.add("call@" + this.time.nanoTime());
			this.time.advance(Duration.ofNanos(300)); // a call that takes 300 ns
			this.ran.add("answer@" + this.time.nanoTime());
		}, 100);
		this.time.schedule(() -> this.ran.add("check@" + this.time.nanoTime()), 200);
		this.time.schedule(() -> this.ran.add("later@" + this.time.nanoTime()), 450);
		this.time.advance(Duration.ofNanos(250));
		assertThat(this.ran).containsExactly("call@100", "check@200", "answer@400");
		assertThat(this.time.nanoTime()).isEqualTo(400);
		this.time.advance(Duration.ofNanos(100));
		assertThat(this.ran).endsWith("later@450");
	}

	@Test
	void advancesUntilAConditionHoldsOrGivesUpAfterTheTimeAllowed() {
		this.time.schedule(() -> this.ran.add("done"), 1_000);
		this.time.advanceUntil(() -> this.ran.contains("done"), Duration.ofNanos(100), Duration.ofNanos(5_000));
		assertThat(this.time.nanoTime()).isEqualTo(1_000);
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> this.time.advanceUntil(() -> false, Duration.ofNanos(100), Duration.ofNanos(500)))
			.withMessageContaining("Not true within");
		assertThat(this.time.nanoTime()).isEqualTo(1_500);
	}

}
