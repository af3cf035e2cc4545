package io.github.leaderelection.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.leaderelection.testing.ZookeeperTesting;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.engine.DuplicateCandidateIdTests;
import io.github.leaderelection.engine.LeaderElectionEngine;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.CloseableUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two processes with one candidate id on ZooKeeper, each with a session of its own, do
 * not fight: ZooKeeper queues candidates by session, so the second waits in line behind
 * the first, the term stays, and the participants show the id twice (which the endpoint
 * lists).
 */
class DuplicateCandidateIdZookeeperTests {

	private final List<LeaderElectionEngine> engines = new ArrayList<>();

	private final List<CuratorFramework> clients = new ArrayList<>();

	private TestingServer server;

	@AfterEach
	void closeEverything() {
		this.engines.forEach(LeaderElectionEngine::close);
		this.clients.forEach(CloseableUtils::closeQuietly);
		CloseableUtils.closeQuietly(this.server);
	}

	@Test
	void oneOfTwoProcessesWithOneIdStandsAside() throws Exception {
		ZookeeperTesting.quietLogs();
		this.server = new TestingServer();
		ZookeeperLeaseStore storeA = store();
		LeaderElectionEngine a = engine(storeA);
		LeaderElectionEngine b = engine(store());
		LeaderElection electionA = a.join("orders");
		LeaderElection electionB = b.join("orders");
		a.start();
		await().atMost(Duration.ofSeconds(30)).until(electionA::isLeader);
		long term = electionA.leadership().orElseThrow().term();
		b.start();
		await().atMost(Duration.ofSeconds(30)).until(() -> storeA.participants("orders").size() == 2);
		assertThat(storeA.participants("orders")).containsExactly("twin", "twin");
		await().pollDelay(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(30)).until(() -> true);
		assertThat(electionA.leadership())
			.hasValueSatisfying((leadership) -> assertThat(leadership.term()).isEqualTo(term));
		assertThat(electionB.isLeader()).isFalse();
	}

	private LeaderElectionEngine engine(ZookeeperLeaseStore store) {
		LeaderElectionEngine engine = LeaderElectionEngine.builder(store)
			.candidateId("twin")
			.timing(DuplicateCandidateIdTests.TIMING)
			.build();
		this.engines.add(engine);
		return engine;
	}

	private ZookeeperLeaseStore store() throws InterruptedException {
		CuratorFramework client = ZookeeperTesting.startedClient(this.server.getConnectString(), Duration.ofSeconds(3));
		this.clients.add(client);
		return new ZookeeperLeaseStore(client, "/leader-election", false);
	}

}
