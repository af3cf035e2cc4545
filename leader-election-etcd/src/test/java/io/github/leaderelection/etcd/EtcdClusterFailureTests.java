package io.github.leaderelection.etcd;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

import io.etcd.jetcd.Client;
import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.testing.EtcdCluster;
import io.github.leaderelection.testing.EtcdServer;
import io.github.leaderelection.testing.OverlapMonitor;
import io.github.leaderelection.testing.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Elections through etcd clusters that fail: a member dies under the leader, the Raft
 * leader dies, a member is cut off, a cluster of one loses its data. Every test watches
 * the candidates' {@code isLeader()} (the shared overlap monitor) and every grant's term.
 * Each test runs a cluster of its own (its own directory and ports), so that the tests
 * may run at the same time as one another.
 */
@Execution(ExecutionMode.CONCURRENT)
@Order(2)
class EtcdClusterFailureTests {

	private static final ElectionTiming TIMING = new ElectionTiming(Duration.ofSeconds(2), Duration.ofMillis(1500),
			Duration.ofMillis(400));

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final String GROUP = "orders";

	private final Deque<AutoCloseable> resources = new ArrayDeque<>();

	/** Every grant of every candidate, in the order they happened. */
	private final List<Long> grantedTerms = new CopyOnWriteArrayList<>();

	@AfterEach
	void close() throws Exception {
		while (!this.resources.isEmpty()) {
			this.resources.pop().close();
		}
	}

	@Test
	void anotherCandidateLeadsWhenTheMemberTheLeaderTalksToDies() throws Exception {
		EtcdCluster cluster = cluster("member-dies");
		// Each candidate talks to one member only.
		List<LeaderElection> candidates = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			candidates.add(candidate("c" + i, client(cluster.member(i).endpoint())));
		}
		int leader = awaitLeader(candidates);
		long term = candidates.get(leader).leadership().orElseThrow().term();
		try (OverlapMonitor monitor = new OverlapMonitor(candidates, LeaderElection::isLeader)) {
			cluster.member(leader).stop(true);
			int next = awaitLeaderOtherThan(candidates, leader);
			assertThat(candidates.get(next).leadership().orElseThrow().term()).isGreaterThan(term);
			assertThat(candidates.get(leader).isLeader()).isFalse();
			assertThat(monitor.overlaps()).isZero();
		}
		assertThat(this.grantedTerms).isSorted().doesNotHaveDuplicates();
	}

	@Test
	void theLeaderKeepsLeadingWhenTheRaftLeaderDies() throws Exception {
		EtcdCluster cluster = cluster("raft-leader-dies");
		List<LeaderElection> candidates = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			candidates.add(candidate("c" + i, client(cluster.endpoints())));
		}
		awaitLeader(candidates);
		try (OverlapMonitor monitor = new OverlapMonitor(candidates, LeaderElection::isLeader)) {
			await().atMost(WAIT).until(() -> cluster.raftLeader() >= 0);
			int raftLeader = cluster.raftLeader();
			cluster.member(raftLeader).stop(true);
			// The other two elect a new Raft leader within a few election timeouts (200
			// ms); the group has a leader throughout, or again within a lease.
			await().atMost(WAIT).until(() -> cluster.raftLeader() >= 0);
			awaitLeader(candidates);
			Thread.sleep(TIMING.leaseDuration().multipliedBy(2).toMillis());
			assertThat(leaderAmong(candidates)).isPresent();
			assertThat(monitor.overlaps()).isZero();
		}
		assertThat(this.grantedTerms).isSorted().doesNotHaveDuplicates();
	}

	@Test
	void aCandidateCutOffFromItsMemberStepsDownAndAnotherLeads() throws Exception {
		EtcdCluster cluster = cluster("member-cut-off");
		TcpProxy link = new TcpProxy(cluster.member(0).port());
		this.resources.push(link);
		LeaderElection cutOff = candidate("cut-off", client("http://127.0.0.1:" + link.port()));
		await().atMost(WAIT).until(cutOff::isLeader);
		List<LeaderElection> candidates = new ArrayList<>(List.of(cutOff));
		candidates.add(candidate("c1", client(cluster.member(1).endpoint())));
		candidates.add(candidate("c2", client(cluster.member(2).endpoint())));
		long term = cutOff.leadership().orElseThrow().term();
		try (OverlapMonitor monitor = new OverlapMonitor(candidates, LeaderElection::isLeader)) {
			link.cut();
			int next = awaitLeaderOtherThan(candidates, 0);
			assertThat(candidates.get(next).leadership().orElseThrow().term()).isGreaterThan(term);
			link.heal();
			// Back, it follows the new leader instead of taking the group back.
			Thread.sleep(TIMING.leaseDuration().multipliedBy(2).toMillis());
			assertThat(cutOff.isLeader()).isFalse();
			assertThat(candidates.get(next).isLeader()).isTrue();
			assertThat(monitor.overlaps()).isZero();
		}
		assertThat(this.grantedTerms).isSorted().doesNotHaveDuplicates();
	}

	@Test
	void aMemberReplacedOnAnEmptyDataDirectoryCatchesUpWithoutAnyoneLosingTheirPlace() throws Exception {
		EtcdCluster cluster = cluster("member-wiped");
		List<LeaderElection> candidates = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			candidates.add(candidate("c" + i, client(cluster.endpoints())));
		}
		int leader = awaitLeader(candidates);
		long term = candidates.get(leader).leadership().orElseThrow().term();
		try (OverlapMonitor monitor = new OverlapMonitor(candidates, LeaderElection::isLeader)) {
			int replaced = (cluster.raftLeader() + 1) % 3;
			cluster.replaceWithEmptyMember(replaced);
			// It caught up: it serves the record the others wrote, with the term it had.
			Client direct = client(cluster.member(replaced).endpoint());
			EtcdLeaseStore store = new EtcdLeaseStore(direct, "failure-tests");
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(store.read(GROUP, Duration.ofSeconds(2)).orElseThrow().term())
					.isGreaterThanOrEqualTo(term));
			Thread.sleep(TIMING.leaseDuration().multipliedBy(2).toMillis());
			assertThat(leaderAmong(candidates)).isPresent();
			assertThat(monitor.overlaps()).isZero();
		}
		assertThat(this.grantedTerms).isSorted().doesNotHaveDuplicates();
	}

	@Test
	void termsKeepGrowingWhenAClusterOfOneLosesItsData() throws Exception {
		EtcdServer server = new EtcdServer(Path.of("target/etcd/wiped"));
		this.resources.push(server);
		server.start();
		List<LeaderElection> candidates = List.of(candidate("a", client(server.endpoint())),
				candidate("b", client(server.endpoint())));
		int leader = awaitLeader(candidates);
		long term = candidates.get(leader).leadership().orElseThrow().term();
		try (OverlapMonitor monitor = new OverlapMonitor(candidates, LeaderElection::isLeader)) {
			server.stop(true);
			server.restartWiped();
			// The record is gone: the leader's renewal fails, and the next grant, by a
			// candidate that saw the old term, is above it.
			await().atMost(WAIT)
				.until(() -> leaderAmong(candidates).flatMap(LeaderElection::leadership)
					.filter((leadership) -> leadership.term() > term)
					.isPresent());
			assertThat(monitor.overlaps()).isZero();
		}
		assertThat(this.grantedTerms).isSorted().doesNotHaveDuplicates();
	}

	// Helpers

	private EtcdCluster cluster(String name) throws Exception {
		EtcdCluster cluster = new EtcdCluster(Path.of("target/etcd/" + name), 3);
		this.resources.push(cluster);
		cluster.start();
		return cluster;
	}

	private Client client(String... endpoints) {
		Client client = Client.builder().endpoints(endpoints).connectTimeout(Duration.ofSeconds(1)).build();
		this.resources.push(client);
		return client;
	}

	private LeaderElection candidate(String id, Client client) {
		LeaderElectionEngine engine = LeaderElectionEngine.builder(new EtcdLeaseStore(client, "failure-tests"))
			.candidateId(id)
			.timing(TIMING)
			.shutdownTimeout(Duration.ofSeconds(2))
			.listener(new LeaderElectionListener() {

				@Override
				public void granted(Leadership leadership) {
					EtcdClusterFailureTests.this.grantedTerms.add(leadership.term());
				}

			})
			.build();
		this.resources.push(engine);
		LeaderElection election = engine.join(GROUP);
		engine.start();
		return election;
	}

	private static int awaitLeader(List<LeaderElection> candidates) {
		return indexOf(candidates,
				await().atMost(WAIT).until(() -> leaderAmong(candidates), Optional::isPresent).orElseThrow());
	}

	private static int awaitLeaderOtherThan(List<LeaderElection> candidates, int excluded) {
		Function<Optional<LeaderElection>, Boolean> other = (leader) -> leader.isPresent()
				&& indexOf(candidates, leader.get()) != excluded;
		return indexOf(candidates,
				await().atMost(WAIT).until(() -> leaderAmong(candidates), other::apply).orElseThrow());
	}

	private static Optional<LeaderElection> leaderAmong(List<LeaderElection> candidates) {
		return candidates.stream().filter(LeaderElection::isLeader).findFirst();
	}

	private static int indexOf(List<LeaderElection> candidates, LeaderElection candidate) {
		return candidates.indexOf(candidate);
	}

}
