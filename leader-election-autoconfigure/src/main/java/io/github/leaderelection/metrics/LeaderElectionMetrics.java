package io.github.leaderelection.metrics;

import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.LeaderInfo;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;

/**
 * The meters of the elections of a {@link LeaderElectionRegistry}, all tagged with
 * {@code group} and {@code backend}:
 * <ul>
 * <li>{@code leader.election.leader} (gauge): 1 while this instance leads the group, else
 * 0;</li>
 * <li>{@code leader.election.term} (gauge): the term of the group's leader as last
 * observed;</li>
 * <li>{@code leader.election.transitions} (counter): grants and revocations of this
 * instance, tagged {@code type} ({@code granted}, {@code revoked}) and
 * {@code reason};</li>
 * <li>{@code leader.election.store.requests} (timer): store requests, tagged
 * {@code operation} and {@code outcome}, recorded by
 * {@link TimedLeaseStorePostProcessor}.</li>
 * </ul>
 *
 * <p>
 * As a {@link LeaderElectionListener} (it must be added to the registry) it counts the
 * transitions; the gauges of a group are registered when the meters are bound, or for a
 * group joined later, at its first event or store request.
 */
class LeaderElectionMetrics implements MeterBinder, LeaderElectionListener {

	static final String LEADER = "leader.election.leader";

	static final String TERM = "leader.election.term";

	static final String TRANSITIONS = "leader.election.transitions";

	static final String STORE_REQUESTS = "leader.election.store.requests";

	/**
	 * The {@code reason} of a grant; revocations carry their {@link RevocationReason}.
	 */
	/** Gauge of the spread of leadership while balancing. */
	static final String BALANCE_SPREAD = "leader.election.balance.spread";

	static final String GRANTED_REASON = "elected";

	private final LeaderElectionRegistry registry;

	private final List<MeterRegistry> meterRegistries = new CopyOnWriteArrayList<>();

	/**
	 * Per group, the state its gauges read; held here because gauges keep only weak
	 * references.
	 */
	private final Map<String, GroupGauges> gauges = new ConcurrentHashMap<>();

	private volatile @Nullable String backend;

	LeaderElectionMetrics(LeaderElectionRegistry registry) {
		this.registry = Objects.requireNonNull(registry, "registry");
	}

	@Override
	public void bindTo(MeterRegistry meterRegistry) {
		this.meterRegistries.add(meterRegistry);
		this.registry.elections().forEach((election) -> register(meterRegistry, gauges(election.group())));
		if (this.registry instanceof LeaderElectionEngine engine && engine.isBalancing()) {
			Gauge.builder(BALANCE_SPREAD, engine, LeaderElectionMetrics::spread)
				.description("Most groups led by one live candidate less the fewest, as this instance last counted")
				.register(meterRegistry);
		}
	}

	private static double spread(LeaderElectionEngine engine) {
		Map<String, Integer> leaders = engine.leadersByCandidate();
		if (leaders.isEmpty()) {
			return Double.NaN;
		}
		return Collections.max(leaders.values()) - Collections.min(leaders.values());
	}

	@Override
	public void granted(Leadership leadership) {
		gaugesFor(leadership.group()).observedTerm(leadership.term());
		countTransition(leadership.group(), "granted", GRANTED_REASON);
	}

	@Override
	public void revoked(Leadership leadership, RevocationReason reason) {
		gaugesFor(leadership.group());
		countTransition(leadership.group(), "revoked", reason.name().toLowerCase(Locale.ROOT).replace('_', '-'));
	}

	@Override
	public void leaderChanged(String group, @Nullable LeaderInfo leader) {
		GroupGauges groupGauges = gaugesFor(group);
		if (leader != null) {
			groupGauges.observedTerm(leader.term());
		}
	}

	/**
	 * Records one store request.
	 * @param group the group the request was for
	 * @param operation such as {@code acquire} or {@code renew}
	 * @param outcome {@code success}, {@code rejected} or {@code failure}
	 * @param nanos how long the request took
	 */
	void recordStoreRequest(String group, String operation, String outcome, long nanos) {
		gaugesFor(group);
		Tags tags = tags(group).and("operation", operation, "outcome", outcome);
		for (MeterRegistry meterRegistry : this.meterRegistries) {
			Timer.builder(STORE_REQUESTS)
				.description("Requests of the leader election to its lease store")
				.tags(tags)
				.register(meterRegistry)
				.record(nanos, TimeUnit.NANOSECONDS);
		}
	}

	private void countTransition(String group, String type, String reason) {
		Tags tags = tags(group).and("type", type, "reason", reason);
		for (MeterRegistry meterRegistry : this.meterRegistries) {
			Counter.builder(TRANSITIONS)
				.description("Times this instance started or stopped leading a group")
				.tags(tags)
				.register(meterRegistry)
				.increment();
		}
	}

	/** The gauges of a group, registered with every bound registry on first use. */
	private GroupGauges gaugesFor(String group) {
		GroupGauges existing = this.gauges.get(group);
		if (existing != null) {
			return existing;
		}
		GroupGauges created = gauges(group);
		this.meterRegistries.forEach((meterRegistry) -> register(meterRegistry, created));
		return created;
	}

	private GroupGauges gauges(String group) {
		return this.gauges.computeIfAbsent(group, GroupGauges::new);
	}

	private void register(MeterRegistry meterRegistry, GroupGauges groupGauges) {
		Tags tags = tags(groupGauges.group);
		Gauge.builder(LEADER, groupGauges, GroupGauges::leading)
			.description("Whether this instance leads the group (1) or not (0)")
			.tags(tags)
			.register(meterRegistry);
		Gauge.builder(TERM, groupGauges, GroupGauges::term)
			.description("Term of the group's leader as last observed by this instance")
			.tags(tags)
			.register(meterRegistry);
	}

	private Tags tags(String group) {
		return Tags.of("group", group, "backend", backend());
	}

	private String backend() {
		String known = this.backend;
		if (known == null) {
			known = (this.registry instanceof LeaderElectionEngine engine) ? engine.store().backend() : "unknown";
			this.backend = known;
		}
		return known;
	}

	/** What a group's gauges read: the election itself, and the last term seen. */
	private final class GroupGauges {

		private final String group;

		private final AtomicLong lastTerm = new AtomicLong(-1);

		GroupGauges(String group) {
			this.group = group;
		}

		void observedTerm(long term) {
			this.lastTerm.set(term);
		}

		double leading() {
			LeaderElection election = LeaderElectionMetrics.this.registry.find(this.group).orElse(null);
			return (election != null && election.isLeader()) ? 1 : 0;
		}

		double term() {
			LeaderElectionMetrics.this.registry.find(this.group)
				.flatMap(LeaderElection::currentLeader)
				.ifPresent((leader) -> observedTerm(leader.term()));
			long term = this.lastTerm.get();
			return (term >= 0) ? term : Double.NaN;
		}

	}

}
