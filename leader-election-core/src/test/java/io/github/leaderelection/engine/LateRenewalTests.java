package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;

import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.engine.TestEngines.Candidate;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import io.github.leaderelection.spi.Lease;
import io.github.leaderelection.spi.LeaseStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.github.leaderelection.engine.TestEngines.TIMING;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A renewal whose answer arrives after the deadline of the belief it renews, on virtual
 * time: {@code isLeader()} has been false since that deadline, and
 * {@link Leadership#isValid()} promises false forever once a term has ended. The fault
 * harness saw a leader's term come back a millisecond after it ended, over a slow link:
 * the late answer extended the belief before the deadline's check had run. It must end
 * the belief instead, and the lease is given up and taken again in a new term.
 */
class LateRenewalTests {

	private static final Duration STEP = Duration.ofMillis(10);

	private static final Duration WAIT = Duration.ofSeconds(30);

	private final VirtualElectionScheduler time = new VirtualElectionScheduler();

	private final InMemoryLeaseStore store = new InMemoryLeaseStore(this.time::nanoTime);

	private final TestEngines engines = new TestEngines(this.time);

	@AfterEach
	void closeEngines() {
		this.engines.close();
	}

	@Test
	void aRenewalAnsweredAfterTheDeadlineOfItsBeliefDoesNotBringTheTermBack() {
		SlowRenewal slow = new SlowRenewal(this.store, this.time);
		Candidate a = this.engines.candidate("a", slow);
		advanceUntil(() -> a.election().isLeader());
		Leadership leadership = a.election().leadership().orElseThrow();
		// A retry period of renewals first: the grant's first renewal round may come
		// within a millisecond of the grant, whose belief then outlasts the slow answer.
		this.time.advance(TIMING.retryPeriod());
		// The store applies the next renewal at once (its lease is good for 3 s more),
		// but the answer comes 1999 ms later: past the deadline of the belief it renews,
		// which the renewal a retry period earlier set 2 s after it started.
		slow.slowNextRenewal(TIMING.renewDeadline().minusMillis(1));
		this.time.advance(TIMING.retryPeriod());
		assertThat(slow.slowRenewalAnswered).as("the slow renewal answered").isTrue();

		assertThat(leadership.isValid()).as("the term after its deadline").isFalse();
		assertThat(a.election().leadership().map(Leadership::term)).isNotEqualTo(leadership.term());
		advanceUntil(() -> a.election().isLeader());
		assertThat(a.election().leadership().orElseThrow().term()).isGreaterThan(leadership.term());
		assertThat(leadership.isValid()).isFalse();
		RecordingListener events = a.delivered();
		assertThat(events.revocations).extracting(RecordingListener.Revocation::term)
			.containsExactly(leadership.term());
		assertThat(events.revocations).extracting(RecordingListener.Revocation::reason)
			.containsExactly(RevocationReason.STORE_ERROR);
	}

	private void advanceUntil(BooleanSupplier condition) {
		this.time.advanceUntil(condition, STEP, WAIT);
	}

	/** A store whose chosen renewal is applied at once and answered after a delay. */
	private static final class SlowRenewal extends ForwardingLeaseStore {

		private final VirtualElectionScheduler time;

		private volatile Duration delay;

		private volatile boolean slowRenewalAnswered;

		SlowRenewal(LeaseStore delegate, VirtualElectionScheduler time) {
			super(delegate);
			this.time = time;
		}

		void slowNextRenewal(Duration delay) {
			this.delay = delay;
		}

		@Override
		public Optional<Lease> renew(Lease lease, Duration leaseDuration, Duration timeout) {
			Optional<Lease> renewed = super.renew(lease, leaseDuration, timeout);
			answerLate();
			return renewed;
		}

		@Override
		public Map<String, Lease> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout) {
			Map<String, Lease> renewed = super.renewAll(leases, leaseDuration, timeout);
			answerLate();
			return renewed;
		}

		private void answerLate() {
			Duration late = this.delay;
			if (late != null) {
				this.delay = null;
				this.time.pause(late);
				this.slowRenewalAnswered = true;
			}
		}

	}

}
