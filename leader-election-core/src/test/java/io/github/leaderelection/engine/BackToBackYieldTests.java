package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A yields, B takes over and yields soon after: A, whose stay-out window ends first, must
 * lead next, not B. A used to wait a retry period past its window (and ignore the release
 * it was told of meanwhile), so B, once out of its own window, took the group back about
 * half the time.
 */
class BackToBackYieldTests {

	private static final ElectionTiming TIMING = new ElectionTiming(Duration.ofSeconds(6), Duration.ofSeconds(4),
			Duration.ofSeconds(1));

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private final List<LeaderElectionEngine> engines = new ArrayList<>();

	@AfterEach
	void closeEngines() {
		this.engines.forEach(LeaderElectionEngine::close);
	}

	@RepeatedTest(4)
	void theFirstToYieldLeadsAgainWhenTheOtherYieldsToo() {
		InMemoryLeaseStore store = new InMemoryLeaseStore();
		LeaderElection a = start(store, "a");
		await().atMost(TIMEOUT).until(a::isLeader);
		LeaderElection b = start(store, "b");
		a.yieldLeadership();
		await().atMost(TIMEOUT).until(b::isLeader);
		// B leads for half a retry period, so its window ends well after A's.
		await().pollDelay(Duration.ofMillis(500)).atMost(TIMEOUT).until(() -> true);
		b.yieldLeadership();
		await().atMost(TIMEOUT).until(() -> a.isLeader() || b.isLeader());
		assertThat(a.isLeader()).as("the first to yield leads again").isTrue();
		assertThat(b.isLeader()).isFalse();
	}

	private LeaderElection start(InMemoryLeaseStore store, String candidateId) {
		LeaderElectionEngine engine = LeaderElectionEngine.builder(store)
			.candidateId(candidateId)
			.timing(TIMING)
			.build();
		this.engines.add(engine);
		LeaderElection election = engine.join("orders");
		engine.start();
		return election;
	}

}
