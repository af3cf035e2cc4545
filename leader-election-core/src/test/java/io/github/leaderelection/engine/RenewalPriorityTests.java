package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import io.github.leaderelection.spi.Lease;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A hand-over of many groups queues their releases on the engine's store threads. The
 * renewal of the groups the leader keeps must not wait behind them: it would reach its
 * deadline while the store answers well, and the leader would lose a group it meant to
 * keep (seen in a fault-harness run, where a burst of work on the store threads held a
 * renewal round back 1.2 s).
 */
class RenewalPriorityTests {

	/**
	 * Short, for a test in real time: renewals every retry period (100 ms), each waiting
	 * at most for a release on its way (70 ms), leave over 200 ms to spare within the
	 * deadline.
	 */
	private static final ElectionTiming TIMING = new ElectionTiming(Duration.ofMillis(800), Duration.ofMillis(400),
			Duration.ofMillis(100));

	/** Releases queued: 24 x 70 ms on the 2 store threads, twice the renew deadline. */
	private static final int HANDED_OVER = 24;

	private static final Duration RELEASE_TAKES = Duration.ofMillis(70);

	private final List<LeaderElectionEngine> engines = new ArrayList<>();

	/** Cleared once the test has seen what it came for, so that closing does not wait. */
	private final AtomicBoolean releasesTakeTime = new AtomicBoolean(true);

	@AfterEach
	void closeEngines() {
		this.releasesTakeTime.set(false);
		this.engines.forEach(LeaderElectionEngine::close);
	}

	@Test
	void aLeaderKeepsTheGroupsItDoesNotHandOverWhileTheReleasesOfThoseItDoesQueueUp() {
		AtomicInteger released = new AtomicInteger();
		ForwardingLeaseStore slowReleases = new ForwardingLeaseStore(new InMemoryLeaseStore()) {

			@Override
			public void release(Lease lease, Duration timeout) {
				if (RenewalPriorityTests.this.releasesTakeTime.get()) {
					try {
						Thread.sleep(RELEASE_TAKES.toMillis());
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
				}
				super.release(lease, timeout);
				released.incrementAndGet();
			}

		};
		List<String> revokedKept = new CopyOnWriteArrayList<>();
		LeaderElectionEngine engine = LeaderElectionEngine.builder(slowReleases)
			.candidateId("a")
			.timing(TIMING)
			.listener(new LeaderElectionListener() {

				@Override
				public void revoked(Leadership leadership, RevocationReason reason) {
					if (leadership.group().equals("kept")) {
						revokedKept.add(reason.name());
					}
				}

			})
			.build();
		this.engines.add(engine);
		LeaderElection kept = engine.join("kept");
		List<LeaderElection> handedOver = new ArrayList<>();
		for (int i = 0; i < HANDED_OVER; i++) {
			handedOver.add(engine.join("group-" + i));
		}
		engine.start();
		await().atMost(Duration.ofSeconds(30))
			.until(() -> kept.isLeader() && handedOver.stream().allMatch(LeaderElection::isLeader));
		long term = kept.leadership().orElseThrow().term();

		handedOver.forEach(LeaderElection::yieldLeadership);
		await().atMost(Duration.ofSeconds(30)).until(() -> released.get() >= HANDED_OVER);

		assertThat(revokedKept).as("revocations of the group kept while %d releases queued", HANDED_OVER).isEmpty();
		assertThat(kept.isLeader()).isTrue();
		assertThat(kept.leadership().orElseThrow().term()).isEqualTo(term);
	}

}
