package io.github.leaderelection.redis;

import java.util.ArrayList;
import java.util.List;

import io.github.leaderelection.testing.TestRedis;
import io.github.leaderelection.engine.DuplicateCandidateIdTests;
import io.github.leaderelection.engine.LeaderElectionEngine;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two processes with one candidate id on Redis, each with a store of its own: one stands
 * aside, the other leads, the term stops climbing.
 */
class DuplicateCandidateIdRedisTests {

	private final List<LeaderElectionEngine> engines = new ArrayList<>();

	private final String prefix = TestRedis.uniquePrefix();

	@AfterEach
	void closeEnginesAndDeleteKeys() {
		this.engines.forEach(LeaderElectionEngine::close);
		TestRedis.deleteKeys(this.prefix);
	}

	@Test
	void oneOfTwoProcessesWithOneIdStandsAside() {
		DuplicateCandidateIdTests.oneLeadsAndTheOtherStandsAside(new RedisLeaseStore(TestRedis.shared(), this.prefix),
				new RedisLeaseStore(TestRedis.shared(), this.prefix), "orders", this.engines);
	}

}
