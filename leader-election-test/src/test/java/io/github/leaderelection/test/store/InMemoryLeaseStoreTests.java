package io.github.leaderelection.test.store;

import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Contract tests for {@link InMemoryLeaseStore}.
 */
class InMemoryLeaseStoreTests extends LeaseStoreContractTests {

	private final InMemoryLeaseStore store = new InMemoryLeaseStore();

	@Override
	protected LeaseStore createStore() {
		return this.store;
	}

	@Override
	protected LeaseStore createStoreWithIdentifier(String unsafeIdentifier) {
		throw new UnsupportedOperationException("The in-memory store has no identifier");
	}

	@Test
	@Override
	protected void rejectsUnsafeIdentifiers() {
		assertThat(InMemoryLeaseStore.class.getConstructors())
			.allSatisfy((constructor) -> assertThat(constructor.getParameterTypes()).doesNotContain(String.class,
					CharSequence.class));
	}

}
