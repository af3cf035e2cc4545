package io.github.leaderelection;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link LeadershipContext}.
 */
class LeadershipContextTests {

	private final Leadership first = new Leadership("orders", "node-1", 1, (term) -> true);

	private final Leadership second = new Leadership("billing", "node-1", 7, (term) -> false);

	@Test
	void isEmptyOutsideScope() {
		assertThat(LeadershipContext.current()).isEmpty();
	}

	@Test
	void restoresPreviousLeadershipWhenNestedScopeCloses() {
		try (LeadershipContext.Scope outer = LeadershipContext.open(this.first)) {
			assertThat(LeadershipContext.current()).containsSame(this.first);
			try (LeadershipContext.Scope inner = LeadershipContext.open(this.second)) {
				assertThat(LeadershipContext.current()).containsSame(this.second);
			}
			assertThat(LeadershipContext.current()).containsSame(this.first);
		}
		assertThat(LeadershipContext.current()).isEmpty();
	}

	@Test
	void isLocalToThread() throws InterruptedException {
		try (LeadershipContext.Scope scope = LeadershipContext.open(this.first)) {
			boolean[] emptyElsewhere = new boolean[1];
			Thread other = new Thread(() -> emptyElsewhere[0] = LeadershipContext.current().isEmpty());
			other.start();
			other.join();
			assertThat(emptyElsewhere[0]).isTrue();
		}
	}

}
