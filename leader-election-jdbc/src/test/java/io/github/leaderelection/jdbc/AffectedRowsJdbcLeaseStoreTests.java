package io.github.leaderelection.jdbc;

import java.time.Duration;
import java.util.Map;

import javax.sql.DataSource;

import io.github.leaderelection.testing.TestDatabases;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Contract tests for {@link JdbcLeaseStore} on MariaDB or MySQL with a driver that counts
 * changed rather than matched rows.
 */
class AffectedRowsJdbcLeaseStoreTests extends JdbcLeaseStoreContractTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	@Override
	protected DataSource dataSource() {
		return TestDatabases.mysqlFamily(Map.of("useAffectedRows", "true"));
	}

	@Test
	void renewalThatChangesNothingStillRenews() {
		LeaseStore store = createStore();
		Duration lease = Duration.ofSeconds(30);
		Lease held = store.tryAcquire("same-millisecond", "a", lease, TIMEOUT).orElseThrow();
		// Back to back, many renewals fall in the millisecond of the previous one: the
		// UPDATE then sets the end the lease already has and the driver counts 0 changed
		// rows.
		for (int i = 0; i < 300; i++) {
			assertThat(store.renew(held, lease, TIMEOUT)).as("renewal %d", i).isPresent();
		}
		store.release(held, TIMEOUT);
		assertThat(store.renew(held, lease, TIMEOUT)).as("renewal after release").isEmpty();
	}

}
