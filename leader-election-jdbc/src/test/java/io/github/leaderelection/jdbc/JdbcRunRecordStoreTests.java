package io.github.leaderelection.jdbc;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import io.github.leaderelection.test.store.RunRecordStoreContractTests;
import io.github.leaderelection.testing.TestDatabases;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The run record contract on every supported database, each in tables of its own that are
 * dropped afterwards.
 */
class JdbcRunRecordStoreTests {

	@Nested
	class OnH2 extends OnDatabase {

		@Override
		DataSource dataSource() {
			return TestDatabases.h2();
		}

	}

	@Nested
	class OnMariaDb extends OnDatabase {

		@Override
		DataSource dataSource() {
			return TestDatabases.mysqlFamily();
		}

	}

	@Nested
	class OnMariaDbCountingAffectedRows extends OnDatabase {

		@Override
		DataSource dataSource() {
			return TestDatabases.mysqlFamily(Map.of("useAffectedRows", "true"));
		}

	}

	@Nested
	class OnPostgres extends OnDatabase {

		@Override
		DataSource dataSource() {
			return TestDatabases.postgres();
		}

	}

	@TestInstance(TestInstance.Lifecycle.PER_CLASS)
	abstract static class OnDatabase extends RunRecordStoreContractTests {

		private ScratchTable table;

		abstract DataSource dataSource();

		@BeforeAll
		void createTables() {
			this.table = ScratchTable.create(dataSource());
		}

		@AfterAll
		void dropTables() {
			if (this.table != null) {
				this.table.drop();
			}
		}

		@Override
		protected LeaseStore createStore() {
			return this.table.store();
		}

		/**
		 * A leader frozen in the middle of a claim (a stopped process, a long pause) must
		 * not keep the group from being taken once its lease ends: a claim held open
		 * across statements would hold the lease row's lock until the process ran again.
		 */
		@Test
		void aLeaderFrozenInAClaimLeavesTheGroupToBeTakenWhenItsLeaseEnds() throws Exception {
			FreezingDataSource freezing = new FreezingDataSource(dataSource());
			JdbcLeaseStore frozen = new JdbcLeaseStore(freezing, this.table.name());
			JdbcLeaseStore other = this.table.store();
			// A first claim, in another group, runs the statements of the store's first
			// use.
			Lease warmUp = acquire(frozen, newGroup(), "a", Duration.ofSeconds(30));
			assertThat(frozen.claimRun(warmUp, run(warmUp, "report", TICK), Duration.ZERO, TIMEOUT)).isTrue();
			String group = newGroup();
			Lease lease = acquire(frozen, group, "a", Duration.ofMillis(500));
			freezing.freezeAfterNextStatement();
			CompletableFuture<Boolean> claim = CompletableFuture
				.supplyAsync(() -> frozen.claimRun(lease, run(lease, "report", TICK), Duration.ZERO, TIMEOUT));
			try {
				assertThat(freezing.awaitFrozen(10)).as("the claim froze").isTrue();
				await().atMost(Duration.ofSeconds(10))
					.pollInterval(Duration.ofMillis(50))
					.until(() -> other.read(group, TIMEOUT).orElseThrow().isExpired());
				Optional<Lease> taken = other.tryAcquire(group, "b", Duration.ofSeconds(30), Duration.ofSeconds(3));
				assertThat(taken).as("the group taken while the claim's process is frozen").isPresent();
			}
			finally {
				freezing.thaw();
				claim.get(10, TimeUnit.SECONDS);
			}
		}

	}

}
