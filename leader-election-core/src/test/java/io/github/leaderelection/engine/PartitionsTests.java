package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;

import io.github.leaderelection.Leadership;
import io.github.leaderelection.Partitions;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.github.leaderelection.engine.TestEngines.TIMING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Partitioned groups: named partitions, owned in shares by balancing candidates, each
 * with a term of its own.
 */
class PartitionsTests {

	private final VirtualElectionScheduler time = new VirtualElectionScheduler();

	private final InMemoryLeaseStore store = new InMemoryLeaseStore(this.time::nanoTime);

	private final TestEngines engines = new TestEngines(this.time);

	@AfterEach
	void closeEngines() {
		this.engines.close();
	}

	@Test
	void partitionsAreGroupsNamedAfterTheirNumber() {
		assertThat(Partitions.group("orders", 3)).isEqualTo("orders/3");
		assertThat(Partitions.partitionOf("orders", "orders/3")).isEqualTo(OptionalInt.of(3));
		assertThat(Partitions.partitionOf("orders", "orders/03")).isEmpty();
		assertThat(Partitions.partitionOf("orders", "orders/x")).isEmpty();
		assertThat(Partitions.partitionOf("orders", "orders-archive/3")).isEmpty();
		assertThat(Partitions.partitionOf("orders", "orders/")).isEmpty();
		assertThat(Partitions.partitionOf("orders", "orders/99999999999")).isEmpty();
		assertThatIllegalArgumentException().isThrownBy(() -> Partitions.group("orders", -1));
	}

	@Test
	void balancingCandidatesOwnTheirShareOfThePartitionsEachWithItsOwnTerm() {
		LeaderElectionEngine a = balancing("a");
		LeaderElectionEngine b = balancing("b");
		assertThatIllegalArgumentException().isThrownBy(() -> a.joinPartitions("orders", 0))
			.withMessageContaining("at least 1 partition");
		assertThat(a.joinPartitions("orders", 8)).hasSize(8);
		b.joinPartitions("orders", 8);
		a.join("orders-archive");
		a.start();
		b.start();
		long limit = this.time.nanoTime() + Duration.ofSeconds(60).toNanos();
		while (a.ownedPartitions("orders").size() != 4 || b.ownedPartitions("orders").size() != 4) {
			assertThat(this.time.nanoTime() - limit).as("partitions spread within 60 s").isNegative();
			this.time.advance(Duration.ofMillis(10));
			Set<Integer> both = new HashSet<>(a.ownedPartitions("orders").keySet());
			both.retainAll(b.ownedPartitions("orders").keySet());
			assertThat(both).as("partitions owned by both").isEmpty();
		}
		Map<Integer, Leadership> owned = a.ownedPartitions("orders");
		owned.forEach((partition, leadership) -> {
			assertThat(leadership.group()).isEqualTo("orders/" + partition);
			assertThat(leadership.term()).isPositive();
			assertThat(leadership.isValid()).isTrue();
		});
	}

	private LeaderElectionEngine balancing(String id) {
		LeaderElectionEngine engine = LeaderElectionEngine.builder(this.store)
			.candidateId(id)
			.timing(TIMING)
			.scheduler(this.time)
			.balance(1, Map.of())
			.build();
		this.engines.track(engine);
		return engine;
	}

}
