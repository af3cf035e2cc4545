package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import io.github.leaderelection.spi.LeaseStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The joins of a node's groups (a store that queues candidates gives each a place in
 * every group's queue), on virtual time.
 */
class GroupJoinsTests {

	private static final ElectionTiming TIMING = new ElectionTiming(Duration.ofSeconds(2), Duration.ofMillis(1500),
			Duration.ofMillis(500));

	private final VirtualElectionScheduler time = new VirtualElectionScheduler();

	private final InMemoryLeaseStore store = new InMemoryLeaseStore(this.time::nanoTime);

	private final TestEngines engines = new TestEngines(this.time);

	@AfterEach
	void closeEngines() {
		this.engines.close();
	}

	/**
	 * A node starting with 500 groups asks the store to join them in a few calls, each
	 * group once, not one call per group: a join costs ZooKeeper a few requests per call.
	 */
	@Test
	void theGroupsOfANodeStartingWithManyAreJoinedInAFewCalls() {
		List<Integer> calls = new CopyOnWriteArrayList<>();
		Set<String> joined = ConcurrentHashMap.newKeySet();
		LeaseStore counting = new ForwardingLeaseStore(this.store) {

			@Override
			public void joinAll(Collection<String> groups, String candidateId, Duration timeout) {
				calls.add(groups.size());
				joined.addAll(groups);
				super.joinAll(groups, candidateId, timeout);
			}

		};
		LeaderElectionEngine engine = LeaderElectionEngine.builder(counting)
			.candidateId("a")
			.timing(TIMING)
			.scheduler(this.time)
			.build();
		this.engines.track(engine);
		List<LeaderElection> elections = new ArrayList<>();
		for (int i = 0; i < 500; i++) {
			elections.add(engine.join("group-" + i));
		}
		engine.start();
		this.time.advanceUntil(() -> joined.size() == 500 && elections.stream().allMatch(LeaderElection::isLeader),
				Duration.ofMillis(10), Duration.ofSeconds(60));
		assertThat(calls.stream().mapToInt(Integer::intValue).sum()).as("groups joined, each once").isEqualTo(500);
		assertThat(calls).as("calls of the store that joined them").hasSizeLessThanOrEqualTo(5);
	}

}
