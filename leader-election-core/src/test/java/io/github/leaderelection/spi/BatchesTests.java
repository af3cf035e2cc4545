package io.github.leaderelection.spi;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.github.leaderelection.memory.InMemoryLeaseStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The batch calls of a store without batches of its own: one group after another, and
 * what was done is never thrown away.
 */
class BatchesTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	@Test
	void acquiringOneByOneReturnsWhatWasTakenWhenALaterCallFails() {
		OneByOne store = new OneByOne("c");
		BatchCutShortException cutShort = catchThrowableOfType(BatchCutShortException.class,
				() -> Batches.tryAcquireAll(store, List.of("a", "b", "c", "d"), "node", LEASE, TIMEOUT));
		Map<String, Lease> taken = cutShort.leases();
		assertThat(taken).containsOnlyKeys("a", "b");
		assertThat(cutShort.answered()).containsExactlyInAnyOrder("a", "b");
		assertThat(cutShort).hasRootCauseMessage("Could not reach the store for group 'c'");
		assertThat(store.read("a", TIMEOUT).orElseThrow().holder()).isEqualTo("node");
		assertThat(store.read("d", TIMEOUT)).isEmpty();
	}

	@Test
	void acquiringOneByOneFailsWhenTheFirstCallFails() {
		OneByOne store = new OneByOne("a");
		assertThatIllegalStateException()
			.isThrownBy(() -> Batches.tryAcquireAll(store, List.of("a", "b"), "node", LEASE, TIMEOUT))
			.withMessageContaining("'a'");
		assertThat(store.read("b", TIMEOUT)).isEmpty();
	}

	@Test
	void acquiringOneByOneLeavesGroupsHeldByOthers() {
		OneByOne store = new OneByOne(null);
		store.tryAcquire("b", "other", LEASE, TIMEOUT);
		assertThat(Batches.tryAcquireAll(store, List.of("a", "b"), "node", LEASE, TIMEOUT)).containsOnlyKeys("a");
	}

	@Test
	void renewingOneByOneHandsOverWhatWasRenewedAndRefusedWhenALaterCallFails() {
		OneByOne store = new OneByOne(null);
		Lease a = store.tryAcquire("a", "node", LEASE, TIMEOUT).orElseThrow();
		Lease b = store.tryAcquire("b", "node", LEASE, TIMEOUT).orElseThrow();
		Lease c = store.tryAcquire("c", "node", LEASE, TIMEOUT).orElseThrow();
		store.release(b, TIMEOUT);
		store.failing = "c";
		BatchCutShortException cutShort = catchThrowableOfType(BatchCutShortException.class,
				() -> Batches.renewAll(store, List.of(a, b, c), LEASE, TIMEOUT));
		assertThat(cutShort.leases()).containsOnlyKeys("a");
		assertThat(cutShort.answered()).containsExactlyInAnyOrder("a", "b");
	}

	@Test
	void readingOneByOneHandsOverWhatWasReadWhenALaterCallFails() {
		OneByOne store = new OneByOne(null);
		store.tryAcquire("a", "node", LEASE, TIMEOUT);
		store.failingRead = "c";
		BatchCutShortException cutShort = catchThrowableOfType(BatchCutShortException.class,
				() -> Batches.readAll(store, List.of("a", "b", "c"), TIMEOUT));
		assertThat(cutShort.leases()).containsOnlyKeys("a");
		assertThat(cutShort.answered()).containsExactlyInAnyOrder("a", "b");
	}

	@Test
	void aStoreWithBatchesOfItsOwnAnswersThem() {
		InMemoryLeaseStore store = new InMemoryLeaseStore();
		store.tryAcquire("a", "node", LEASE, TIMEOUT);
		assertThat(store).isInstanceOf(BatchLeaseStore.class);
		assertThat(Batches.readAll(store, List.of("a", "b"), TIMEOUT)).containsOnlyKeys("a");
	}

	/** A store with the four calls only, whose calls for one group fail. */
	private static final class OneByOne implements LeaseStore {

		private final LeaseStore delegate = new InMemoryLeaseStore();

		private String failing;

		private String failingRead;

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
			if (group.equals(this.failingRead)) {
				throw new IllegalStateException("Could not reach the store for group '" + group + "'");
			}
			return this.delegate.read(group, timeout);
		}

		@Override
		public Optional<Lease> renew(Lease lease, Duration leaseDuration, Duration timeout) {
			if (lease.group().equals(this.failing)) {
				throw new IllegalStateException("Could not reach the store for group '" + lease.group() + "'");
			}
			return this.delegate.renew(lease, leaseDuration, timeout);
		}

		@Override
		public void release(Lease lease, Duration timeout) {
			this.delegate.release(lease, timeout);
		}

		@Override
		public String backend() {
			return "one-by-one";
		}

	}

}
