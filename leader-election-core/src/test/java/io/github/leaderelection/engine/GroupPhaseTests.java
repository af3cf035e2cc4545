package io.github.leaderelection.engine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.leaderelection.engine.TestEngines.Candidate;
import io.github.leaderelection.memory.InMemoryLeaseStore;
import io.github.leaderelection.spi.ForwardingLeaseStore;
import io.github.leaderelection.spi.Lease;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.github.leaderelection.engine.TestEngines.GROUP;
import static io.github.leaderelection.engine.TestEngines.TIMING;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The phases a group's election goes through, on virtual time, and the diagram of them
 * that CONTRIBUTING.md draws.
 */
class GroupPhaseTests {

	private static final Duration STEP = Duration.ofMillis(10);

	private static final Duration WAIT = Duration.ofSeconds(60);

	private final VirtualElectionScheduler time = new VirtualElectionScheduler();

	private final InMemoryLeaseStore store = new InMemoryLeaseStore(this.time::nanoTime);

	private final TestEngines engines = new TestEngines(this.time);

	@AfterEach
	void closeEngines() {
		this.engines.close();
	}

	@Test
	void aLeaderThatYieldsReleasesStaysOutAndLeadsAgainWhenNobodyElseTakesTheGroup() {
		LeaderElectionEngine engine = this.engines.engine("a", this.store);
		engine.join(GROUP);
		assertThat(phase(engine)).isEqualTo(GroupPhase.NOT_STARTED);
		engine.start();
		advanceUntil(() -> phase(engine) == GroupPhase.LEADING);
		engine.find(GROUP).orElseThrow().yieldLeadership();
		assertThat(phase(engine)).isEqualTo(GroupPhase.RELEASING);
		this.time.runDueTasks();
		assertThat(phase(engine)).isEqualTo(GroupPhase.STAYING_OUT);
		advanceUntil(() -> phase(engine) == GroupPhase.LEADING);
		engine.close();
		assertThat(phase(engine)).isEqualTo(GroupPhase.STOPPED);
	}

	@Test
	void aFollowerThatTakesOverALeaseNotRunOutYetWaitsItOutAsPending() {
		Candidate a = this.engines.candidate("a", this.store);
		advanceUntil(() -> a.election().isLeader());
		Candidate b = this.engines.candidate("b", this.store);
		advanceUntil(() -> phase(b.engine()) == GroupPhase.FOLLOWING);
		this.store.forceLeader(GROUP, "b", TIMING.storeCallTimeout());
		advanceUntil(() -> phase(b.engine()) == GroupPhase.PENDING);
		advanceUntil(() -> phase(b.engine()) == GroupPhase.LEADING);
		assertThat(a.election().isLeader()).isFalse();
	}

	@Test
	void aLeaderWhoseRenewalIsRefusedIsLosingWhileItReadsWhy() {
		AtomicReference<GroupPhase> whileReading = new AtomicReference<>();
		AtomicReference<LeaderElectionEngine> engine = new AtomicReference<>();
		ForwardingLeaseStore refusing = new ForwardingLeaseStore(this.store) {

			private volatile boolean refuse;

			@Override
			public Optional<Lease> renew(Lease lease, Duration leaseDuration, Duration timeout) {
				if (this.refuse) {
					return Optional.empty();
				}
				this.refuse = true; // the first renewal succeeds, the next is refused
				return super.renew(lease, leaseDuration, timeout);
			}

			@Override
			public Map<String, Lease> renewAll(Collection<Lease> leases, Duration leaseDuration, Duration timeout) {
				Map<String, Lease> renewed = new TreeMap<>();
				for (Lease lease : leases) {
					renew(lease, leaseDuration, timeout).ifPresent((extended) -> renewed.put(lease.group(), extended));
				}
				return renewed;
			}

			@Override
			public Optional<Lease> read(String group, Duration timeout) {
				LeaderElectionEngine current = engine.get();
				if (current != null && whileReading.get() == null
						&& current.status(group).map(ElectionStatus::phase).orElse(null) == GroupPhase.LOSING) {
					whileReading.set(GroupPhase.LOSING);
				}
				return super.read(group, timeout);
			}

			@Override
			public Map<String, Lease> readAll(Collection<String> groups, Duration timeout) {
				Map<String, Lease> leases = new TreeMap<>();
				for (String group : groups) {
					read(group, timeout).ifPresent((lease) -> leases.put(group, lease));
				}
				return leases;
			}

		};
		Candidate a = this.engines.candidate("a", refusing);
		engine.set(a.engine());
		advanceUntil(() -> whileReading.get() != null);
		advanceUntil(() -> phase(a.engine()) != GroupPhase.LOSING);
		assertThat(a.delivered().revocations).isNotEmpty();
	}

	@Test
	void theDiagramInContributingHasExactlyThePhasesOfTheEnum() throws IOException {
		String contributing = Files.readString(contributing());
		int start = contributing.indexOf("```mermaid\nstateDiagram-v2\n    [*] --> NOT_STARTED");
		assertThat(start).as("the state diagram in CONTRIBUTING.md").isNotNegative();
		String diagram = contributing.substring(start, contributing.indexOf("```", start + 3));
		Set<String> drawn = new TreeSet<>();
		Matcher states = Pattern.compile("([A-Z_]+) --> ([A-Z_]+)").matcher(diagram);
		while (states.find()) {
			drawn.add(states.group(1));
			drawn.add(states.group(2));
		}
		Set<String> phases = new TreeSet<>(Arrays.stream(GroupPhase.values()).map(Enum::name).toList());
		assertThat(drawn).isEqualTo(phases);
	}

	static Path contributing() {
		Path here = Path.of("").toAbsolutePath();
		for (Path dir = here; dir != null; dir = dir.getParent()) {
			if (Files.exists(dir.resolve("CONTRIBUTING.md"))) {
				return dir.resolve("CONTRIBUTING.md");
			}
		}
		throw new AssertionError("No CONTRIBUTING.md above " + here);
	}

	private static GroupPhase phase(LeaderElectionEngine engine) {
		return engine.status(GROUP).orElseThrow().phase();
	}

	private void advanceUntil(BooleanSupplier condition) {
		this.time.advanceUntil(condition, STEP, WAIT);
	}

}
