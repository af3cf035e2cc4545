package io.github.leaderelection.spi;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.github.leaderelection.memory.InMemoryLeaseStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The batch operations a store gets by default, one group after another.
 */
class LeaseStoreDefaultsTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	@Test
	void acquiringOneByOneReturnsWhatWasTakenWhenALaterCallFails() {
		OneByOne store = new OneByOne("c");
		Map<String, Lease> taken = store.tryAcquireAll(List.of("a", "b", "c", "d"), "node", LEASE, TIMEOUT);
		assertThat(taken).containsOnlyKeys("a", "b");
		assertThat(store.read("a", TIMEOUT).orElseThrow().holder()).isEqualTo("node");
		assertThat(store.read("d", TIMEOUT)).isEmpty();
	}

	@Test
	void acquiringOneByOneFailsWhenTheFirstCallFails() {
		OneByOne store = new OneByOne("a");
		assertThatIllegalStateException()
			.isThrownBy(() -> store.tryAcquireAll(List.of("a", "b"), "node", LEASE, TIMEOUT))
			.withMessageContaining("'a'");
		assertThat(store.read("b", TIMEOUT)).isEmpty();
	}

	@Test
	void acquiringOneByOneLeavesGroupsHeldByOthers() {
		OneByOne store = new OneByOne(null);
		store.tryAcquire("b", "other", LEASE, TIMEOUT);
		assertThat(store.tryAcquireAll(List.of("a", "b"), "node", LEASE, TIMEOUT)).containsOnlyKeys("a");
	}

	/** A store with only the defaults, whose acquisition of one group fails. */
	private static final class OneByOne implements LeaseStore {

		private final LeaseStore delegate = new InMemoryLeaseStore();

		private final String failing;

		OneByOne(String failing) {
			this.failing = failing;
		}

		@Override
		public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
			if (group.equals(this.failing)) {
				throw new IllegalStateException("Could not reach the store for group '" + group + "'");
			}
			return this.delegate.tryAcquire(group, candidateId, leaseDuration, timeout);
		}

		@Override
		public Optional<Lease> read(String group, Duration timeout) {
			return this.delegate.read(group, timeout);
		}

		@Override
		public boolean renew(Lease lease, Duration leaseDuration, Duration timeout) {
			return this.delegate.renew(lease, leaseDuration, timeout);
		}

		@Override
		public void release(Lease lease, Duration timeout) {
			this.delegate.release(lease, timeout);
		}

		@Override
		public void forceLeader(String group, String candidateId, Duration timeout) {
			this.delegate.forceLeader(group, candidateId, timeout);
		}

		@Override
		public void clear(String group, Duration timeout) {
			this.delegate.clear(group, timeout);
		}

		@Override
		public String backend() {
			return "one-by-one";
		}

	}

}
