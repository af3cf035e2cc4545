package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.actuate.LeaderElectionHealthIndicator;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two live processes with one candidate id (two engines here) must not take the lease
 * from each other forever: one notices, says so and stands aside, the other leads. A
 * process restarted under its old id is not taken for a duplicate.
 */
@ExtendWith(OutputCaptureExtension.class)
public class DuplicateCandidateIdTests {

	public static final ElectionTiming TIMING = new ElectionTiming(Duration.ofMillis(1500), Duration.ofMillis(1000),
			Duration.ofMillis(200));

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final Duration STEP = Duration.ofMillis(10);

	private final VirtualElectionScheduler time = new VirtualElectionScheduler();

	private final InMemoryLeaseStore store = new InMemoryLeaseStore(this.time::nanoTime);

	private final Waits virtual = Waits.virtual(this.time);

	private final List<LeaderElectionEngine> engines = new ArrayList<>();

	@AfterEach
	void closeEngines() {
		this.engines.forEach(LeaderElectionEngine::close);
	}

	@Test
	void oneOfTwoProcessesWithOneIdStandsAsideAndTheOtherLeads(CapturedOutput output) {
		LeaderElectionEngine[] pair = oneLeadsAndTheOtherStandsAside(this.store, this.store, "orders", this.engines,
				this.virtual);
		assertThat(output).contains("Candidate id 'twin' is used by another live process")
			.contains("leader-election.candidate-id");
		Health aside = new LeaderElectionHealthIndicator(pair[1]).health();
		assertThat(aside.getStatus()).isEqualTo(Status.DOWN);
		assertThat(aside.getDetails().get("groups").toString()).contains("conflict=another process uses candidate id");
		assertThat(new LeaderElectionHealthIndicator(pair[0]).health().getStatus()).isEqualTo(Status.UP);
	}

	@Test
	void aProcessRestartedUnderItsOldIdTakesOverWithoutAConflict() {
		LeaderElectionEngine first = engine(this.store, "restarted", false, this.engines, this.virtual);
		LeaderElection before = first.join("orders");
		first.start();
		this.virtual.until(before::isLeader);
		first.close(); // without releasing: the lease stays under the id, as after a
						// crash

		LeaderElectionEngine second = engine(this.store, "restarted", true, this.engines, this.virtual);
		LeaderElection after = second.join("orders");
		second.start();
		this.virtual.until(after::isLeader);
		long term = after.leadership().orElseThrow().term();
		this.virtual.pass(TIMING.leaseDuration().multipliedBy(2));
		assertThat(after.leadership().orElseThrow().term()).isEqualTo(term);
		assertThat(second.status("orders").orElseThrow().conflict()).isEmpty();
	}

	@Test
	void theOneStandingAsideCompetesAgainOnceTheOtherIsGone() {
		LeaderElectionEngine[] pair = oneLeadsAndTheOtherStandsAside(this.store, this.store, "orders", this.engines,
				this.virtual);
		LeaderElectionEngine leader = pair[0];
		LeaderElectionEngine aside = pair[1];
		leader.close();
		LeaderElection election = aside.find("orders").orElseThrow();
		this.virtual.until(election::isLeader);
		assertThat(aside.status("orders").orElseThrow().conflict()).isEmpty();
	}

	/**
	 * Starts two engines with one candidate id on a real store, in real time, and checks
	 * that the term stops climbing, exactly one leads and the other reports the conflict.
	 * @return the leader's engine, then the one standing aside
	 */
	public static LeaderElectionEngine[] oneLeadsAndTheOtherStandsAside(LeaseStore store, String group,
			List<LeaderElectionEngine> engines) {
		return oneLeadsAndTheOtherStandsAside(store, store, group, engines);
	}

	/**
	 * As {@link #oneLeadsAndTheOtherStandsAside(LeaseStore, String, List)}, each process
	 * with a store (and connection) of its own.
	 * @return the leader's engine, then the one standing aside
	 */
	public static LeaderElectionEngine[] oneLeadsAndTheOtherStandsAside(LeaseStore storeA, LeaseStore storeB,
			String group, List<LeaderElectionEngine> engines) {
		return oneLeadsAndTheOtherStandsAside(storeA, storeB, group, engines, Waits.REAL);
	}

	private static LeaderElectionEngine[] oneLeadsAndTheOtherStandsAside(LeaseStore storeA, LeaseStore storeB,
			String group, List<LeaderElectionEngine> engines, Waits waits) {
		LeaseStore store = storeA;
		LeaderElectionEngine a = engine(storeA, "twin", true, engines, waits);
		LeaderElectionEngine b = engine(storeB, "twin", true, engines, waits);
		LeaderElection electionA = a.join(group);
		LeaderElection electionB = b.join(group);
		a.start();
		b.start();
		waits.until(() -> a.status(group).orElseThrow().conflict().isPresent()
				|| b.status(group).orElseThrow().conflict().isPresent());
		LeaderElectionEngine aside = a.status(group).orElseThrow().conflict().isPresent() ? a : b;
		LeaderElectionEngine leader = (aside == a) ? b : a;
		LeaderElection leading = (aside == a) ? electionB : electionA;
		LeaderElection standingAside = (aside == a) ? electionA : electionB;
		waits.until(leading::isLeader);
		long term = leading.leadership().orElseThrow().term();
		// Several lease durations later the same term still leads: nobody takes the lease
		// any more.
		waits.pass(TIMING.leaseDuration().multipliedBy(3));
		assertThat(leading.leadership()).as("still leading in the same term")
			.hasValueSatisfying((leadership) -> assertThat(leadership.term()).isEqualTo(term));
		assertThat(store.read(group, Duration.ofSeconds(5)).orElseThrow().term()).isEqualTo(term);
		assertThat(standingAside.isLeader()).isFalse();
		assertThat(aside.status(group).orElseThrow().conflict()).hasValueSatisfying(
				(conflict) -> assertThat(conflict).contains("another process uses candidate id 'twin'"));
		assertThat(leader.status(group).orElseThrow().conflict()).isEmpty();
		return new LeaderElectionEngine[] { leader, aside };
	}

	private static LeaderElectionEngine engine(LeaseStore store, String candidateId, boolean release,
			List<LeaderElectionEngine> engines, Waits waits) {
		LeaderElectionEngine.Builder builder = LeaderElectionEngine.builder(store)
			.candidateId(candidateId)
			.timing(TIMING)
			.releaseOnShutdown(release);
		if (waits.scheduler != null) {
			builder.scheduler(waits.scheduler);
		}
		LeaderElectionEngine engine = builder.build();
		engines.add(engine);
		return engine;
	}

	/**
	 * How the tests wait: in real time for a real store, or on a virtual clock that the
	 * engines run on.
	 */
	private record Waits(@Nullable VirtualElectionScheduler scheduler) {

		static final Waits REAL = new Waits(null);

		static Waits virtual(VirtualElectionScheduler scheduler) {
			return new Waits(scheduler);
		}

		void until(Callable<Boolean> condition) {
			if (this.scheduler == null) {
				await().atMost(TIMEOUT).until(condition);
				return;
			}
			this.scheduler.advanceUntil(() -> {
				try {
					return condition.call();
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
			}, STEP, TIMEOUT);
		}

		void pass(Duration duration) {
			if (this.scheduler == null) {
				await().pollDelay(duration).atMost(duration.plus(TIMEOUT)).until(() -> true);
				return;
			}
			this.scheduler.advance(duration);
		}

	}

}
