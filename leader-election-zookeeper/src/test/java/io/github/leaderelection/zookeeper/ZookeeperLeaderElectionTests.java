package io.github.leaderelection.zookeeper;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.leaderelection.testing.ZookeeperTesting;
import io.github.leaderelection.testing.OverlapMonitor;
import io.github.leaderelection.testing.TcpProxy;

import io.github.leaderelection.ElectionTiming;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;

import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.engine.LeaderElectionEngine;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingZooKeeperServer;
import org.apache.curator.utils.CloseableUtils;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The election engine on the ZooKeeper store over a three-server ensemble: servers that
 * stop, sessions that expire and connections that flap never make two candidates believe
 * at once, and a leader is back afterwards.
 */
@Order(4)
class ZookeeperLeaderElectionTests {

	/**
	 * Short, but each store call may take 500 ms (the retry period): the machine may be
	 * busy.
	 */
	private static final ElectionTiming TIMING = new ElectionTiming(Duration.ofSeconds(3), Duration.ofSeconds(2),
			Duration.ofMillis(500));

	/** At least the lease duration, as the store requires. */
	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(4);

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final String BASE_PATH = "/engine";

	private static TestingCluster cluster;

	private final Deque<AutoCloseable> resources = new ArrayDeque<>();

	private final Set<InstanceSpec> stopped = new HashSet<>();

	private final List<Event> events = new CopyOnWriteArrayList<>();

	@BeforeAll
	static void startCluster() throws Exception {
		ZookeeperTesting.quietLogs();
		// Half-second ticks: sessions from 1 s to 10 s, and quick quorum decisions.
		List<InstanceSpec> specs = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			specs.add(new InstanceSpec(null, -1, -1, -1, true, -1, 500, -1, Map.of("4lw.commands.whitelist", "srvr")));
		}
		cluster = new TestingCluster(specs);
		cluster.start();
		awaitEnsemble();
	}

	@AfterAll
	static void stopCluster() {
		CloseableUtils.closeQuietly(cluster);
	}

	@AfterEach
	void closeResourcesAndRestartServers() throws Exception {
		while (!this.resources.isEmpty()) {
			try {
				this.resources.pop().close();
			}
			catch (Exception ex) {
				// keep closing the others
			}
		}
		for (InstanceSpec spec : this.stopped) {
			server(spec).restart();
		}
		this.stopped.clear();
		awaitEnsemble();
	}

	@Test
	void keepsTheLeaderWhenAnotherServerStops() throws Exception {
		String group = newGroup();
		List<Candidate> candidates = startCandidates(group, 3, (id) -> cluster.getConnectString());
		Candidate leader = awaitOneLeader(candidates);
		long term = leader.election.leadership().orElseThrow().term();
		InstanceSpec leaderServer = serverOf(leader);
		InstanceSpec victim = cluster.getInstances()
			.stream()
			.filter((spec) -> !spec.equals(leaderServer) && !mode(spec).equals("leader"))
			.findFirst()
			.orElseThrow();
		try (OverlapMonitor monitor = new OverlapMonitor(elections(candidates), LeaderElection::isLeader)) {
			stop(victim);
			// The followers on the stopped server move to another; the leader's
			// connection never breaks.
			await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).until(leader.election::isLeader);
			assertThat(leader.election.leadership().orElseThrow().term()).isEqualTo(term);
			assertThat(revocations(leader.id, 0)).isEmpty();
			assertThat(monitor.overlaps()).isZero();
		}
	}

	@Test
	void atMostOneBelieverWhenTheLeadersServerStops() throws Exception {
		String group = newGroup();
		List<Candidate> candidates = startCandidates(group, 3, (id) -> cluster.getConnectString());
		Candidate leader = awaitOneLeader(candidates);
		try (OverlapMonitor monitor = new OverlapMonitor(elections(candidates), LeaderElection::isLeader)) {
			long stoppedAt = System.nanoTime();
			stop(serverOf(leader));
			// SUSPENDED stops the leader at once; once reconnected to another server, it
			// leads again.
			await().atMost(WAIT).until(() -> !revocations(leader.id, stoppedAt).isEmpty());
			Candidate next = awaitOneLeader(candidates);
			await().atMost(WAIT).until(() -> !grants(next.id, stoppedAt).isEmpty());
			System.out.printf("Leader's server stopped: '%s' revoked after %d ms (%s), '%s' leads after %d ms%n",
					leader.id, millisSince(stoppedAt, revocations(leader.id, stoppedAt).get(0).nanos),
					revocations(leader.id, stoppedAt).get(0).reason, next.id,
					millisSince(stoppedAt, grants(next.id, stoppedAt).get(0).nanos));
			assertThat(monitor.samples()).isPositive();
			assertThat(monitor.overlaps()).isZero();
		}
	}

	@Test
	void revokesAnExpiredSessionBeforeAnyoneElseIsGranted() throws Exception {
		String group = newGroup();
		InstanceSpec upstream = cluster.getInstances().iterator().next();
		TcpProxy proxy = proxy(upstream);
		Candidate cutOff = startCandidate("a", group, proxy.connectString(), TIMING, this::store);
		await().atMost(WAIT).until(cutOff.election::isLeader);
		List<Candidate> candidates = new ArrayList<>(List.of(cutOff));
		candidates.addAll(startCandidates(group, 2, (id) -> cluster.getConnectString()));
		await().atMost(WAIT).until(() -> cutOff.store.participants(group).size() == 3);
		try (OverlapMonitor monitor = new OverlapMonitor(elections(candidates), LeaderElection::isLeader)) {
			long cutAt = System.nanoTime();
			proxy.blackhole();
			// The server expires the session a session timeout after its last ping, and
			// deletes the node; the leader stopped before, at its renew deadline or on
			// SUSPENDED.
			Candidate next = await().atMost(WAIT)
				.until(() -> leaderAmong(candidates), (found) -> found.isPresent() && found.get() != cutOff)
				.orElseThrow();
			// Listeners hear of the grant just after isLeader() turned true.
			await().atMost(WAIT).until(() -> !grants(next.id, cutAt).isEmpty());
			Event granted = grants(next.id, cutAt).get(0);
			// The cut-off leader's last word before that grant is a revocation (on a busy
			// machine, slow renewals may even have revoked it before the cut).
			Event last = this.events.stream()
				.filter((event) -> event.candidate.equals(cutOff.id) && event.nanos - granted.nanos < 0)
				.reduce((first, second) -> second)
				.orElseThrow();
			System.out.printf(
					"Leader cut off: revoked after %d ms (%s), '%s' granted after %d ms (session timeout %d ms)%n",
					millisSince(cutAt, last.nanos), last.reason, next.id, millisSince(cutAt, granted.nanos),
					SESSION_TIMEOUT.toMillis());
			assertThat(last.granted).as("the cut-off leader was revoked first").isFalse();
			assertThat(monitor.overlaps()).isZero();
			proxy.heal();
			proxy.dropConnections(); // a black-holed stream is no longer framed
			// A new session: the old leader queues again, behind the others.
			await().atMost(WAIT)
				.untilAsserted(() -> assertThat(next.store.participants(group)).hasSize(3).last().isEqualTo(cutOff.id));
			assertThat(awaitOneLeader(candidates)).isSameAs(next);
			assertThat(monitor.overlaps()).isZero();
		}
	}

	@Test
	void endsConnectionFlappingWithOneLeader() throws Exception {
		String group = newGroup();
		List<InstanceSpec> servers = new ArrayList<>(cluster.getInstances());
		List<TcpProxy> proxies = new ArrayList<>();
		for (InstanceSpec spec : servers) {
			proxies.add(proxy(spec));
		}
		AtomicInteger next = new AtomicInteger();
		List<Candidate> candidates = startCandidates(group, 3,
				(id) -> proxies.get(next.getAndIncrement()).connectString());
		awaitOneLeader(candidates);
		long flappingFrom = System.nanoTime();
		try (OverlapMonitor monitor = new OverlapMonitor(elections(candidates), LeaderElection::isLeader)) {
			for (int round = 0; round < 12; round++) {
				int target = leaderAmong(candidates).map(candidates::indexOf)
					.orElse(ThreadLocalRandom.current().nextInt(candidates.size()));
				if (round == 4 || round == 8) {
					// Restart the server the leader is connected to.
					InstanceSpec spec = servers.get(target);
					stop(spec);
					Thread.sleep(300);
					server(spec).restart();
					this.stopped.remove(spec);
				}
				else {
					proxies.get(target).dropConnections();
				}
				// A ZooKeeper client waits up to a second before it connects again.
				Thread.sleep(ThreadLocalRandom.current().nextLong(200, 1200));
			}
			// No livelock: once the flapping stops, one leader keeps one term.
			Leadership stable = awaitStableLeadership(candidates, Duration.ofSeconds(2));
			Candidate leader = candidates.stream()
				.filter((c) -> c.id.equals(stable.candidateId()))
				.findFirst()
				.orElseThrow();
			long term = stable.term();
			System.out.printf(
					"Connection flapping: %d revocations and %d grants in 12 rounds, then '%s' leads in term %d "
							+ "(%d samples, %d overlaps)%n",
					revocations(null, flappingFrom).size(), grants(null, flappingFrom).size(), leader.id, term,
					monitor.samples(), monitor.overlaps());
			assertThat(monitor.overlaps()).isZero();
		}
	}

	/**
	 * The leader's link gets so slow that every call times out, while its session lives
	 * on (pings still arrive). Its queue node kept everyone else out for as long as the
	 * link stayed slow, until a leader that gives up also gave up its place (issue 17).
	 */
	@Test
	void aLeaderThatGivesUpOnASlowLinkLetsAnotherLead() throws Exception {
		String group = newGroup();
		TcpProxy slowLink = proxy(cluster.getInstances().iterator().next());
		Candidate leader = startCandidate("slow", group, slowLink.connectString(), TIMING, this::store);
		await().atMost(WAIT).until(leader.election::isLeader);
		Candidate other = startCandidate("other", group, cluster.getConnectString(), TIMING, this::store);
		await().atMost(WAIT).until(() -> other.election.currentLeader().isPresent());
		try (OverlapMonitor monitor = new OverlapMonitor(elections(List.of(leader, other)), LeaderElection::isLeader)) {
			// A round trip of 1.6 s: above the 500 ms call timeout, well within the
			// session timeout.
			slowLink.latency(Duration.ofMillis(800));
			long slowFrom = System.nanoTime();
			await().atMost(WAIT).until(other.election::isLeader);
			long leaderless = millisSince(slowFrom, System.nanoTime());
			slowLink.latency(Duration.ZERO);
			System.out.printf("Slow link: the other candidate leads %d ms after the leader's link got slow%n",
					leaderless);
			// The slow leader steps down at its renew deadline (2 s after its last good
			// renewal); its release goes out after the call pending then times out
			// (0.5 s) and lands behind the renewals already on the link (1.6 s each way
			// or so). Without it, the other waited as long as the link was slow.
			assertThat(leaderless).isLessThan(6000);
			assertThat(leader.election.isLeader()).isFalse();
			assertThat(monitor.overlaps()).isZero();
		}
	}

	@Test
	void handsOverOnReleaseThroughTheSuccessorsWatch() throws Exception {
		// A retry period of 5 s: a successor that learned by polling would take seconds.
		ElectionTiming slow = new ElectionTiming(Duration.ofSeconds(9), Duration.ofSeconds(7), Duration.ofSeconds(5));
		List<Long> wakeUps = new CopyOnWriteArrayList<>();
		String group = newGroup();
		Candidate leader = startCandidate("a", group, cluster.getConnectString(), slow, this::store);
		await().atMost(WAIT).until(leader.election::isLeader);
		Candidate successor = startCandidate("b", group, cluster.getConnectString(), slow,
				(client) -> new ZookeeperLeaseStore(client, BASE_PATH, false) {

					@Override
					public AutoCloseable watch(String group, Runnable onChange) {
						return super.watch(group, () -> {
							wakeUps.add(System.nanoTime());
							onChange.run();
						});
					}

				});
		await().atMost(WAIT).until(() -> successor.election.currentLeader().isPresent());
		assertThat(successor.store.participants(group)).containsExactly("a", "b");
		long releasedAt = System.nanoTime();
		leader.engine.close();
		await().atMost(WAIT).pollInterval(Duration.ofMillis(1)).until(successor.election::isLeader);
		long grantedAt = System.nanoTime();
		System.out.printf("Handover on release: %d ms from close() of the leader to the successor leading "
				+ "(retry period %d ms)%n", millisSince(releasedAt, grantedAt), slow.retryPeriod().toMillis());
		assertThat(wakeUps).anyMatch((nanos) -> nanos - releasedAt > 0 && grantedAt - nanos > 0);
		assertThat(Duration.ofNanos(grantedAt - releasedAt)).isLessThan(Duration.ofSeconds(2));
	}

	// Candidates

	private List<Candidate> startCandidates(String group, int count, Function<String, String> connectString)
			throws Exception {
		List<Candidate> candidates = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			String id = "candidate-" + UUID.randomUUID().toString().substring(0, 8);
			candidates.add(startCandidate(id, group, connectString.apply(id), TIMING, this::store));
		}
		return candidates;
	}

	private Candidate startCandidate(String id, String group, String connectString, ElectionTiming timing,
			Function<CuratorFramework, ZookeeperLeaseStore> storeFactory) throws Exception {
		Duration sessionTimeout = (timing.leaseDuration().compareTo(SESSION_TIMEOUT) > 0) ? Duration.ofSeconds(10)
				: SESSION_TIMEOUT;
		CuratorFramework client = ZookeeperTesting.startedClient(connectString, sessionTimeout);
		this.resources.push(client);
		ZookeeperLeaseStore store = storeFactory.apply(client);
		LeaderElectionEngine engine = LeaderElectionEngine.builder(store)
			.candidateId(id)
			.timing(timing)
			.listener(recorder(id))
			.build();
		this.resources.push(engine);
		LeaderElection election = engine.join(group);
		engine.start();
		return new Candidate(id, client, store, engine, election);
	}

	private ZookeeperLeaseStore store(CuratorFramework client) {
		return new ZookeeperLeaseStore(client, BASE_PATH, false);
	}

	/**
	 * Waits until one candidate has led in one term for the given time, and returns that
	 * leadership.
	 */
	private static Leadership awaitStableLeadership(List<Candidate> candidates, Duration time) {
		AtomicReference<@Nullable Leadership> seen = new AtomicReference<>();
		AtomicLong since = new AtomicLong();
		await().atMost(WAIT).pollInterval(Duration.ofMillis(20)).until(() -> {
			Leadership now = leaderAmong(candidates).flatMap((candidate) -> candidate.election.leadership())
				.orElse(null);
			Leadership before = seen.getAndSet(now);
			if (now == null || before == null || before.term() != now.term()) {
				since.set(System.nanoTime());
				return false;
			}
			return System.nanoTime() - since.get() > time.toNanos();
		});
		return Objects.requireNonNull(seen.get());
	}

	private static Candidate awaitOneLeader(List<Candidate> candidates) {
		return await().atMost(WAIT).until(() -> leaderAmong(candidates), Optional::isPresent).orElseThrow();
	}

	/** The one candidate that believes it leads, if exactly one does. */
	private static Optional<Candidate> leaderAmong(List<Candidate> candidates) {
		List<Candidate> leaders = candidates.stream().filter((candidate) -> candidate.election.isLeader()).toList();
		return (leaders.size() == 1) ? Optional.of(leaders.get(0)) : Optional.empty();
	}

	private TcpProxy proxy(InstanceSpec upstream) throws IOException {
		TcpProxy proxy = new TcpProxy(upstream.getPort());
		this.resources.push(proxy);
		return proxy;
	}

	// Events

	private LeaderElectionListener recorder(String candidate) {
		return new LeaderElectionListener() {

			@Override
			public void granted(Leadership leadership) {
				ZookeeperLeaderElectionTests.this.events.add(new Event(System.nanoTime(), candidate, true, null));
			}

			@Override
			public void revoked(Leadership leadership, RevocationReason reason) {
				ZookeeperLeaderElectionTests.this.events.add(new Event(System.nanoTime(), candidate, false, reason));
			}

		};
	}

	private List<Event> grants(@Nullable String candidate, long afterNanos) {
		return select(candidate, true, afterNanos);
	}

	private List<Event> revocations(@Nullable String candidate, long afterNanos) {
		return select(candidate, false, afterNanos);
	}

	private List<Event> select(@Nullable String candidate, boolean granted, long afterNanos) {
		return this.events.stream()
			.filter((event) -> (candidate == null || event.candidate.equals(candidate)) && event.granted == granted
					&& event.nanos - afterNanos > 0)
			.toList();
	}

	private static long millisSince(long startNanos, long nanos) {
		return Duration.ofNanos(nanos - startNanos).toMillis();
	}

	// Servers

	private void stop(InstanceSpec spec) throws IOException {
		this.stopped.add(spec);
		server(spec).stop();
	}

	private static TestingZooKeeperServer server(InstanceSpec spec) {
		return cluster.getServers()
			.stream()
			.filter((server) -> server.getInstanceSpec().equals(spec))
			.findFirst()
			.orElseThrow();
	}

	private static InstanceSpec serverOf(Candidate candidate) throws Exception {
		InstanceSpec spec = cluster.findConnectionInstance(candidate.client.getZookeeperClient().getZooKeeper());
		assertThat(spec).as("server of %s", candidate.id).isNotNull();
		return spec;
	}

	/**
	 * The server's role in the ensemble ("leader", "follower"), from its "srvr" command.
	 */
	private static String mode(InstanceSpec spec) {
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), spec.getPort())) {
			socket.setSoTimeout(2000);
			socket.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
			Matcher mode = Pattern.compile("Mode: (\\w+)")
				.matcher(new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII));
			return mode.find() ? mode.group(1) : "not serving";
		}
		catch (IOException ex) {
			return "down";
		}
	}

	private static void awaitEnsemble() {
		await().atMost(WAIT)
			.until(() -> cluster.getInstances().stream().map(ZookeeperLeaderElectionTests::mode).sorted().toList(),
					(modes) -> modes.equals(List.of("follower", "follower", "leader")));
	}

	private static List<LeaderElection> elections(List<Candidate> candidates) {
		return candidates.stream().map(Candidate::election).toList();
	}

	private static String newGroup() {
		return "group-" + UUID.randomUUID();
	}

	private record Candidate(String id, CuratorFramework client, ZookeeperLeaseStore store, LeaderElectionEngine engine,
			LeaderElection election) {

	}

	private record Event(long nanos, String candidate, boolean granted, @Nullable RevocationReason reason) {

	}

}
