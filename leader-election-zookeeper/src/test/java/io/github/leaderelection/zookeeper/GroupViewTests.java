package io.github.leaderelection.zookeeper;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Terms follow ZooKeeper's clock, never this machine's: a candidate whose clock is set
 * hours ahead would otherwise push every later term ahead of ZooKeeper's, and a group
 * node written back after a loss could no longer start above the terms granted before it.
 */
class GroupViewTests {

	@Test
	void theNextTermIsAboveTheGroupNodesLastWriteByZooKeepersClock() {
		assertThat(view(5, 1_000, 2_000).nextTerm()).isEqualTo(2_000_001);
		assertThat(view(5, 3_000, 2_000).nextTerm()).isEqualTo(3_000_001);
	}

	@Test
	void theNextTermIsAboveTheStoredOneWhenThatIsAhead() {
		assertThat(view(9_000_000, 1_000, 2_000).nextTerm()).isEqualTo(9_000_001);
	}

	private static GroupView view(long term, long createdMillis, long modifiedMillis) {
		return new GroupView(Grant.none(term, 1000, 0), 1, createdMillis, modifiedMillis, List.of());
	}

}
