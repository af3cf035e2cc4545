package io.github.leaderelection.actuate;

import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonInclude.Include;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.LeaderInfo;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.actuate.ActionFailedException.Kind;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * The {@code leaderelection} endpoint: every group this instance takes part in, who leads
 * it and in which term, and the administrator's operations.
 *
 * <ul>
 * <li>{@code GET /actuator/leaderelection}: every group;</li>
 * <li>{@code GET /actuator/leaderelection/{group}}: one group;</li>
 * <li>{@code POST /actuator/leaderelection/{group}/yield}: this instance stops leading
 * the group and stays out of the race for two retry periods, or until another instance
 * has been granted it;</li>
 * <li>{@code POST /actuator/leaderelection/{group}/force-leader} with
 * {@code {"candidateId": "..."}}: that candidate leads next, once the current lease has
 * run out;</li>
 * <li>{@code POST /actuator/leaderelection/{group}/force-reelection}: the current leader
 * loses the lease and any candidate may win once it has run out.</li>
 * </ul>
 *
 * <p>
 * Forcing never makes two candidates lead at once: the engine lets the new leader act
 * only once the old lease is over. The write operations are only available when the
 * endpoint's access is {@code unrestricted}
 * ({@code management.endpoint.leaderelection.access}); by default it is read-only.
 *
 * <p>
 * Each write operation is logged at INFO, for the audit trail. An action that fails
 * throws an exception whose kind says why (bad request, unknown group, refused, store
 * unavailable or timed out); over HTTP, the endpoint's web extension answers it with 400,
 * 404, 409, 503 or 504.
 *
 * <p>
 * As a {@link LeaderElectionListener} (it must be added to the registry) it notes since
 * when this instance has observed each group's leader, and keeps each group's last
 * transitions ({@code history}: granted, revoked with the reason, leader changed), so
 * that a move of leadership can be explained without logs.
 */
@Endpoint(id = "leaderelection", defaultAccess = Access.READ_ONLY)
public class LeaderElectionEndpoint implements LeaderElectionListener {

	private static final Logger logger = LoggerFactory.getLogger(LeaderElectionEndpoint.class);

	private final LeaderElectionRegistry registry;

	private final @Nullable LeaderElectionParticipants participants;

	private final Clock clock;

	/** Per group, the leader last observed and the instant it was. */
	private final Map<String, Observed> observed = new ConcurrentHashMap<>();

	private final LeadershipHistory history;

	/**
	 * Creates an endpoint.
	 * @param registry the elections to show
	 * @param participants who takes part in each group, or {@code null} when the store
	 * cannot tell
	 */
	public LeaderElectionEndpoint(LeaderElectionRegistry registry, @Nullable LeaderElectionParticipants participants) {
		this(registry, participants, Clock.systemUTC());
	}

	LeaderElectionEndpoint(LeaderElectionRegistry registry, @Nullable LeaderElectionParticipants participants,
			Clock clock) {
		this.registry = Objects.requireNonNull(registry, "registry");
		this.participants = participants;
		this.clock = Objects.requireNonNull(clock, "clock");
		this.history = new LeadershipHistory(clock, LeadershipHistory.DEFAULT_SIZE);
	}

	@Override
	public void granted(Leadership leadership) {
		this.history.granted(leadership);
	}

	@Override
	public void revoked(Leadership leadership, RevocationReason reason) {
		this.history.revoked(leadership, reason);
	}

	@Override
	public void leaderChanged(String group, @Nullable LeaderInfo leader) {
		this.history.leaderChanged(group, leader);
		if (leader != null) {
			this.observed.put(group, new Observed(leader, this.clock.instant().truncatedTo(ChronoUnit.MILLIS)));
		}
		else {
			this.observed.remove(group);
		}
	}

	@ReadOperation
	public GroupsDescriptor groups() {
		Map<String, GroupDescriptor> groups = new TreeMap<>();
		for (LeaderElection election : this.registry.elections()) {
			groups.put(election.group(), describe(election));
		}
		return new GroupsDescriptor(groups, balance());
	}

	private @Nullable BalanceDescriptor balance() {
		if (!(this.registry instanceof LeaderElectionEngine engine) || !engine.isBalancing()) {
			return null;
		}
		Map<String, Integer> leaders = engine.leadersByCandidate();
		int spread = leaders.isEmpty() ? 0 : Collections.max(leaders.values()) - Collections.min(leaders.values());
		return new BalanceDescriptor(leaders, spread);
	}

	/**
	 * Performs an administrator's action on this instance: {@code rebalance} runs a
	 * balancing round now.
	 * @param action {@code rebalance}
	 * @return what was done
	 */
	@WriteOperation
	public ActionDescriptor actOnInstance(String action) {
		if (!"rebalance".equals(action.toLowerCase(Locale.ROOT))) {
			throw new ActionFailedException(Kind.BAD_REQUEST, "Unknown action '" + action + "': use rebalance");
		}
		if (!(this.registry instanceof LeaderElectionEngine engine) || !engine.isBalancing()) {
			throw new ActionFailedException(Kind.REFUSED,
					"Balancing is off on this instance: set leader-election.balance.enabled=true to spread leadership");
		}
		logger.info("Rebalancing now, as asked through the leaderelection endpoint");
		try {
			engine.rebalance();
		}
		catch (IllegalStateException ex) {
			throw new ActionFailedException(Kind.REFUSED, ex.getMessage(), ex);
		}
		return new ActionDescriptor(null, "rebalance", this.registry.candidateId(), "rebalancing");
	}

	@ReadOperation
	public @Nullable GroupDescriptor group(@Selector String group) {
		return this.registry.find(group).map(this::describe).orElse(null);
	}

	/**
	 * Performs an administrator's action on a group.
	 * @param group the group
	 * @param action {@code yield}, {@code force-leader} or {@code force-reelection}
	 * @param candidateId the candidate to make leader, for {@code force-leader}
	 * @return what was done
	 */
	@WriteOperation
	public ActionDescriptor act(@Selector String group, @Selector String action, @Nullable String candidateId) {
		LeaderElection election = this.registry.find(group)
			.orElseThrow(() -> new ActionFailedException(Kind.UNKNOWN_GROUP,
					"Unknown group '" + group + "': this instance takes part in "
							+ this.registry.elections()
								.stream()
								.map(LeaderElection::group)
								.sorted()
								.collect(Collectors.joining(", ", "[", "]"))));
		Action parsed = Action.parse(action);
		try {
			return switch (parsed) {
				case YIELD -> {
					logger.info("Yielding the leadership of group '{}' as asked through the leaderelection endpoint",
							group);
					boolean yielded = election.yieldLeadership();
					yield new ActionDescriptor(group, Action.YIELD.value, this.registry.candidateId(),
							yielded ? "yielded" : "not-leader");
				}
				case FORCE_LEADER -> {
					String target = requireCandidate(group, candidateId);
					logger.info(
							"Forcing candidate '{}' to lead group '{}' as asked through the leaderelection endpoint",
							target, group);
					try {
						election.forceLeader(target);
					}
					catch (IllegalArgumentException ex) {
						throw new ActionFailedException(Kind.BAD_REQUEST, "Invalid candidateId: " + ex.getMessage(),
								ex);
					}
					yield new ActionDescriptor(group, Action.FORCE_LEADER.value, target, "forced");
				}
				case FORCE_REELECTION -> {
					logger.info("Forcing a re-election in group '{}' as asked through the leaderelection endpoint",
							group);
					election.forceReelection();
					yield new ActionDescriptor(group, Action.FORCE_REELECTION.value, null, "forced");
				}
			};
		}
		catch (LeaderElectionException ex) {
			ActionFailedException failure = ActionFailedException.fromStore(parsed.value, ex);
			logger.warn("The {} of group '{}' asked through the leaderelection endpoint failed: {}", parsed.value,
					group, failure.getMessage());
			throw failure;
		}
	}

	private String requireCandidate(String group, @Nullable String candidateId) {
		if (candidateId == null || candidateId.isBlank()) {
			throw new ActionFailedException(Kind.BAD_REQUEST,
					"Missing candidateId: force-leader needs the candidateId of the candidate to make leader, such as "
							+ "{\"candidateId\": \"" + this.registry.candidateId() + "\"}");
		}
		List<String> known = participants(group);
		if (known != null && !known.contains(candidateId)) {
			throw new ActionFailedException(Kind.REFUSED, "Unknown candidate '" + candidateId + "': it does not take "
					+ "part in group '" + group + "'; its candidates are " + known);
		}
		return candidateId;
	}

	private GroupDescriptor describe(LeaderElection election) {
		GroupState state = GroupState.of(election, this.registry);
		LeaderInfo leader = state.leader().orElse(null);
		Observed since = this.observed.get(election.group());
		return new GroupDescriptor(state.role(), election.candidateId(), (leader != null) ? leader.candidateId() : null,
				(leader != null) ? leader.term() : null,
				(since != null && since.leader().equals(leader)) ? since.at().toString() : null, state.backend(),
				state.leaseRemaining().map(GroupState::format).orElse(null), state.consecutiveFailures(),
				!state.storeUnreachable(), participants(election.group()), this.history.of(election.group()));
	}

	private @Nullable List<String> participants(String group) {
		if (this.participants == null) {
			return null;
		}
		try {
			return this.participants.participants(group).orElse(null);
		}
		catch (RuntimeException ex) {
			// The store cannot tell now: show the group without them, and let a forced
			// leader be
			// judged by the store itself.
			logger.debug("Could not list the participants of group '{}'", group, ex);
			return null;
		}
	}

	private record Observed(LeaderInfo leader, Instant at) {

	}

	private enum Action {

		YIELD("yield"), FORCE_LEADER("force-leader"), FORCE_REELECTION("force-reelection");

		private final String value;

		Action(String value) {
			this.value = value;
		}

		static Action parse(String value) {
			for (Action action : values()) {
				if (action.value.equals(value.toLowerCase(Locale.ROOT))) {
					return action;
				}
			}
			throw new ActionFailedException(Kind.BAD_REQUEST,
					"Unknown action '" + value + "': use one of yield, force-leader, force-reelection");
		}

	}

	/**
	 * Every group this instance takes part in.
	 *
	 * @param groups the groups by name
	 */
	public record GroupsDescriptor(Map<String, GroupDescriptor> groups,
			@JsonInclude(Include.NON_NULL) @Nullable BalanceDescriptor balance) implements OperationResponseBody {

	}

	/**
	 * How leadership is spread, while balancing is on.
	 *
	 * @param leadersByCandidate how many of this instance's groups each live candidate
	 * leads, as this instance last counted (once per retry period)
	 * @param spread the most groups led by one candidate less the fewest
	 */
	public record BalanceDescriptor(Map<String, Integer> leadersByCandidate, int spread) {

	}

	/**
	 * One group's election as this instance sees it.
	 *
	 * @param role {@code LEADER} or {@code FOLLOWER}: this instance's role
	 * @param candidateId this instance's candidate id
	 * @param leader the leader's candidate id as last observed, {@code null} when unknown
	 * @param term the leader's term, {@code null} when unknown
	 * @param leaderSince when this instance observed that leader and term first
	 * (ISO-8601, UTC, by this instance's clock); {@code null} when not known
	 * @param backend the store's backend
	 * @param leaseRemaining while leading, the time left (ISO-8601) before this instance
	 * stops leading unless it renews
	 * @param consecutiveFailures failed store attempts in a row
	 * @param storeReachable whether the store answered within the renew deadline
	 * @param participants the group's candidates, when the store can tell
	 * @param history the group's last transitions as this instance saw them (at most
	 * {@value LeadershipHistory#DEFAULT_SIZE}), oldest first
	 */
	public record GroupDescriptor(String role, String candidateId, @JsonInclude(Include.ALWAYS) @Nullable String leader,
			@JsonInclude(Include.ALWAYS) @Nullable Long term, @Nullable String leaderSince, String backend,
			@Nullable String leaseRemaining, int consecutiveFailures, boolean storeReachable,
			@Nullable List<String> participants, List<LeadershipTransition> history) implements OperationResponseBody {

	}

	/**
	 * The result of an administrator's action.
	 *
	 * @param group the group
	 * @param action the action
	 * @param candidateId the candidate acted on: this instance for a yield, the target of
	 * a forced leader
	 * @param outcome {@code yielded}, {@code not-leader} (a yield by a follower) or
	 * {@code forced}
	 */
	public record ActionDescriptor(@JsonInclude(Include.NON_NULL) @Nullable String group, String action,
			@Nullable String candidateId, String outcome) implements OperationResponseBody {

	}

}
