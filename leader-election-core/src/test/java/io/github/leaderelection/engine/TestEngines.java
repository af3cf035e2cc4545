package io.github.leaderelection.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.spi.LeaseStore;
import org.jspecify.annotations.Nullable;

/**
 * The engines of one test, each a candidate in {@link #GROUP}, on a scheduler of the
 * test's or on their own threads; closed (and their faulty stores healed) after the test.
 */
final class TestEngines implements AutoCloseable {

	static final ElectionTiming TIMING = new ElectionTiming(Duration.ofMillis(3000), Duration.ofMillis(2000),
			Duration.ofMillis(250));

	static final String GROUP = "orders";

	private final @Nullable ElectionScheduler scheduler;

	private final ElectionTiming timing;

	private final List<LeaderElectionEngine> engines = new ArrayList<>();

	private final List<FaultyLeaseStore> faultyStores = new ArrayList<>();

	/**
	 * @param scheduler the scheduler every engine runs on, or null for their own threads
	 */
	TestEngines(@Nullable ElectionScheduler scheduler) {
		this(scheduler, TIMING);
	}

	/**
	 * @param scheduler the scheduler every engine runs on, or null for their own threads
	 * @param timing the timing of every engine
	 */
	TestEngines(@Nullable ElectionScheduler scheduler, ElectionTiming timing) {
		this.scheduler = scheduler;
		this.timing = timing;
	}

	Candidate candidate(String id, LeaseStore store) {
		RecordingListener events = new RecordingListener();
		LeaderElectionEngine engine = engine(id, store, events);
		LeaderElection election = engine.join(GROUP);
		events.watching(election);
		engine.start();
		return new Candidate(engine, election, events);
	}

	LeaderElectionEngine engine(String id, LeaseStore store, LeaderElectionListener... listeners) {
		LeaderElectionEngine.Builder builder = LeaderElectionEngine.builder(store).candidateId(id).timing(this.timing);
		if (this.scheduler != null) {
			builder.scheduler(this.scheduler);
		}
		for (LeaderElectionListener listener : listeners) {
			builder.listener(listener);
		}
		LeaderElectionEngine engine = builder.build();
		this.engines.add(engine);
		return engine;
	}

	/** Closes an engine of this test's with the test's other engines. */
	void track(LeaderElectionEngine engine) {
		this.engines.add(engine);
	}

	/** Closes the engine of a candidate now, as its process would on shutdown. */
	void closeEngineOf(String candidateId) {
		this.engines.stream()
			.filter((engine) -> engine.candidateId().equals(candidateId))
			.forEach(LeaderElectionEngine::close);
	}

	FaultyLeaseStore faulty(FaultyLeaseStore store) {
		this.faultyStores.add(store);
		return store;
	}

	@Override
	public void close() {
		this.faultyStores.forEach(FaultyLeaseStore::heal);
		this.engines.forEach(LeaderElectionEngine::close);
	}

	record Candidate(LeaderElectionEngine engine, LeaderElection election, RecordingListener events) {

		/**
		 * Waits, in real time, for the events published so far to reach the listeners.
		 */
		RecordingListener delivered() {
			if (!this.engine.notifier().awaitDelivered(Duration.ofSeconds(15))) {
				throw new AssertionError("Events of '" + this.election.candidateId() + "' were not delivered in 15 s");
			}
			return this.events;
		}

	}

}
