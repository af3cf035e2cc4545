package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An instance that starts after the store lost a group's record cannot tell the record it
 * finds from the truth. Unless it watches the group for a lease duration before it leads,
 * it leads while the holder of the lost term still believes. On virtual time.
 */
class WatchBeforeLeadingTests {

	private static final Duration STEP = Duration.ofMillis(10);

	private final VirtualElectionScheduler time = new VirtualElectionScheduler();

	private final WipeableStore store = new WipeableStore(this.time);

	@Test
	void aNewcomerThatWatchesFirstNeverLeadsBesideTheHolderOfALostTerm() {
		Duration overlap = overlapAfterAWipe(true);
		assertThat(overlap).isZero();
	}

	@Test
	void aNewcomerThatDoesNotWatchLeadsBesideTheHolderOfALostTermUntilItsNextRenewal() {
		Duration overlap = overlapAfterAWipe(false);
		assertThat(overlap).isPositive().isLessThanOrEqualTo(TestEngines.TIMING.retryPeriod().plus(STEP));
	}

	@Test
	void aLoneInstanceThatWatchesFirstLeadsOneLeaseDurationAfterItStarts() {
		try (TestEngines engines = new TestEngines(this.time)) {
			LeaderElectionEngine engine = LeaderElectionEngine.builder(this.store)
				.candidateId("a")
				.timing(TestEngines.TIMING)
				.scheduler(this.time)
				.watchBeforeLeading(true)
				.build();
			engines.track(engine);
			LeaderElection election = engine.join(TestEngines.GROUP);
			long started = this.time.nanoTime();
			engine.start();
			this.time.advanceUntil(election::isLeader, STEP, Duration.ofSeconds(30));
			assertThat(Duration.ofNanos(this.time.nanoTime() - started))
				.isGreaterThanOrEqualTo(TestEngines.TIMING.leaseDuration())
				.isLessThan(TestEngines.TIMING.leaseDuration().plus(TestEngines.TIMING.retryPeriod().multipliedBy(2)));
		}
	}

	/**
	 * One instance leads; the store loses everything; another instance starts, finds the
	 * group never led and takes it.
	 * @return how long both believed at once
	 */
	private Duration overlapAfterAWipe(boolean watchBeforeLeading) {
		try (TestEngines engines = new TestEngines(this.time)) {
			LeaderElection first = engines.candidate("first", this.store).election();
			this.time.advanceUntil(first::isLeader, STEP, Duration.ofSeconds(30));
			this.time.advance(Duration.ofSeconds(1));
			// Right after a renewal, so that the holder finds the loss only a retry
			// period
			// later, after the newcomer's first look, whatever their phases.
			int renewals = this.store.renewals();
			this.time.advanceUntil(() -> this.store.renewals() > renewals, Duration.ofMillis(1),
					Duration.ofSeconds(30));
			this.store.wipe();
			LeaderElectionEngine newcomer = LeaderElectionEngine.builder(this.store)
				.candidateId("newcomer")
				.timing(TestEngines.TIMING)
				.scheduler(this.time)
				.watchBeforeLeading(watchBeforeLeading)
				.build();
			engines.track(newcomer);
			LeaderElection second = newcomer.join(TestEngines.GROUP);
			newcomer.start();
			long overlapNanos = 0;
			for (int step = 0; !second.isLeader() || first.isLeader(); step++) {
				assertThat(step).as("steps until the newcomer alone leads").isLessThan(3_000);
				this.time.advance(STEP);
				if (first.isLeader() && second.isLeader()) {
					overlapNanos += STEP.toNanos();
				}
			}
			return Duration.ofNanos(overlapNanos);
		}
	}

	/** A store whose data can be lost at once, as a wipe does. */
	private static final class WipeableStore implements LeaseStore {

		private final VirtualElectionScheduler time;

		private volatile InMemoryLeaseStore data;

		private final AtomicInteger renewals = new AtomicInteger();

		WipeableStore(VirtualElectionScheduler time) {
			this.time = time;
			this.data = new InMemoryLeaseStore(time::nanoTime);
		}

		int renewals() {
			return this.renewals.get();
		}

		void wipe() {
			this.data = new InMemoryLeaseStore(this.time::nanoTime);
		}

		@Override
		public Optional<Lease> read(String group, Duration timeout) {
			return this.data.read(group, timeout);
		}

		@Override
		public Optional<Lease> tryAcquire(String group, String candidateId, Duration leaseDuration, Duration timeout) {
			return this.data.tryAcquire(group, candidateId, leaseDuration, timeout);
		}

		@Override
		public Optional<Lease> renew(Lease lease, Duration leaseDuration, Duration timeout) {
			Optional<Lease> renewed = this.data.renew(lease, leaseDuration, timeout);
			renewed.ifPresent((done) -> this.renewals.incrementAndGet());
			return renewed;
		}

		@Override
		public void release(Lease lease, Duration timeout) {
			this.data.release(lease, timeout);
		}

	}

}
