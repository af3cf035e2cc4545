package io.github.leaderelection.actuate;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
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
import io.github.leaderelection.engine.GroupPhase;
import io.github.leaderelection.engine.LeaderElectionEngine;
import io.github.leaderelection.scheduling.ScheduledJobs;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.github.leaderelection.actuate.ActionFailedException.Kind;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.DisposableBean;
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
 * Each write operation is logged at INFO, for the audit trail, once its group name and
 * candidate id have been checked (no control characters, at most 255 characters); the
 * values of a request appear in logs and messages only escaped and shortened. A group
 * accepts at most a number of write operations within a window (ten a minute unless
 * configured); each is counted and noted in the group's history. An action that fails
 * throws an exception whose kind says why (bad request, unknown group, refused, too many,
 * store unavailable or timed out); over HTTP, the endpoint's web extension answers it
 * with 400, 404, 409, 429, 503 or 504.
 *
 * <p>
 * A read costs the store at most one retry period in total, whatever the number of
 * groups: leader and term are those the election last saw ({@code viewAge} says how old),
 * and participants that the store did not list in time are those last listed
 * ({@code participantsCurrent} is then {@code false}).
 *
 * <p>
 * As a {@link LeaderElectionListener} (it must be added to the registry) it notes since
 * when this instance has observed each group's leader, and keeps each group's last
 * transitions ({@code history}: granted, revoked with the reason, leader changed), so
 * that a move of leadership can be explained without logs.
 */
@Endpoint(id = "leaderelection", defaultAccess = Access.READ_ONLY)
public class LeaderElectionEndpoint implements LeaderElectionListener, DisposableBean {

	/** How long a read waits for the store when the registry does not say. */
	private static final Duration DEFAULT_READ_BUDGET = Duration.ofSeconds(2);

	private static final Logger logger = LoggerFactory.getLogger(LeaderElectionEndpoint.class);

	private final LeaderElectionRegistry registry;

	private final @Nullable ParticipantsLookup participants;

	private final OperatorActions actions;

	private final OperatorActionCounter counter;

	private final Clock clock;

	/** Per group, the leader last observed and the instant it was. */
	private final Map<String, Observed> observed = new ConcurrentHashMap<>();

	private final LeadershipHistory history;

	private volatile @Nullable JobsView jobs;

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
		this(registry, participants, clock,
				new OperatorActions(OperatorActions.DEFAULT_MAX_ACTIONS, OperatorActions.DEFAULT_WINDOW),
				(group, action, outcome) -> {
				});
	}

	LeaderElectionEndpoint(LeaderElectionRegistry registry, @Nullable LeaderElectionParticipants participants,
			Clock clock, OperatorActions actions, OperatorActionCounter counter) {
		this.registry = Objects.requireNonNull(registry, "registry");
		this.participants = (participants != null) ? new ParticipantsLookup(participants) : null;
		this.clock = Objects.requireNonNull(clock, "clock");
		this.history = new LeadershipHistory(clock, LeadershipHistory.DEFAULT_SIZE);
		this.actions = actions;
		this.counter = counter;
	}

	/**
	 * Shows the scheduled leader-only methods of each group.
	 * @param jobs the jobs, or {@code null} for none
	 */
	void showJobs(@Nullable ScheduledJobs jobs) {
		this.jobs = (jobs != null) ? new JobsView(jobs) : null;
	}

	@Override
	public void destroy() {
		if (this.participants != null) {
			this.participants.close();
		}
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
		List<LeaderElection> elections = List.copyOf(this.registry.elections());
		Map<String, ParticipantsLookup.Result> participants = participants(
				elections.stream().map(LeaderElection::group).toList());
		Map<String, GroupDescriptor> groups = new TreeMap<>();
		for (LeaderElection election : elections) {
			groups.put(election.group(), describe(election, participants.get(election.group())));
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
			throw new ActionFailedException(Kind.BAD_REQUEST,
					"Unknown action " + RequestValues.escape(action) + ": use rebalance");
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
		return this.registry.find(group)
			.map((election) -> describe(election, participants(List.of(group)).get(group)))
			.orElse(null);
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
		// Checked before anything is logged or done: the values come from the request.
		RequestValues.requireValid("group", group);
		LeaderElection election = this.registry.find(group)
			.orElseThrow(() -> new ActionFailedException(Kind.UNKNOWN_GROUP,
					"Unknown group " + RequestValues.escape(group) + ": this instance takes part in "
							+ this.registry.elections()
								.stream()
								.map(LeaderElection::group)
								.sorted()
								.collect(Collectors.joining(", ", "[", "]"))));
		Action parsed = Action.parse(action);
		String target = (parsed == Action.FORCE_LEADER) ? requireCandidate(group, candidateId) : null;
		Optional<Duration> retryIn = this.actions.tryCount(group);
		if (retryIn.isPresent()) {
			refuseTooMany(group, parsed, target, retryIn.get());
		}
		this.history.operatorAction(group, parsed.value, target, "asked");
		try {
			ActionDescriptor done = perform(election, parsed, target);
			this.counter.count(group, parsed.value, "done");
			return done;
		}
		catch (LeaderElectionException ex) {
			this.counter.count(group, parsed.value, "failed");
			ActionFailedException failure = ActionFailedException.fromStore(parsed.value, ex);
			logger.warn("The {} of group {} asked through the leaderelection endpoint failed: {}", parsed.value,
					RequestValues.escape(group), failure.getMessage());
			throw failure;
		}
		catch (ActionFailedException ex) {
			this.counter.count(group, parsed.value, "failed");
			throw ex;
		}
	}

	private ActionDescriptor perform(LeaderElection election, Action action, @Nullable String target) {
		String group = election.group();
		String shownGroup = RequestValues.escape(group);
		return switch (action) {
			case YIELD -> {
				logger.info("Yielding the leadership of group {} as asked through the leaderelection endpoint",
						shownGroup);
				boolean yielded = election.yieldLeadership();
				yield new ActionDescriptor(group, Action.YIELD.value, this.registry.candidateId(),
						yielded ? "yielded" : "not-leader");
			}
			case FORCE_LEADER -> {
				String candidate = Objects.requireNonNull(target);
				logger.info("Forcing candidate {} to lead group {} as asked through the leaderelection endpoint",
						RequestValues.escape(candidate), shownGroup);
				try {
					election.forceLeader(candidate);
				}
				catch (IllegalArgumentException ex) {
					throw new ActionFailedException(Kind.BAD_REQUEST,
							"Invalid candidateId: " + RequestValues.escape(ex.getMessage()), ex);
				}
				yield new ActionDescriptor(group, Action.FORCE_LEADER.value, candidate, "forced");
			}
			case FORCE_REELECTION -> {
				logger.info("Forcing a re-election in group {} as asked through the leaderelection endpoint",
						shownGroup);
				election.forceReelection();
				yield new ActionDescriptor(group, Action.FORCE_REELECTION.value, null, "forced");
			}
		};
	}

	private void refuseTooMany(String group, Action action, @Nullable String target, Duration retryIn) {
		this.counter.count(group, action.value, "limited");
		this.history.operatorAction(group, action.value, target, "limited");
		Duration wait = Duration.ofSeconds((retryIn.toMillis() + 999) / 1000);
		logger.warn(
				"Refused the {} of group {} asked through the leaderelection endpoint: {} actions within {} "
						+ "already; retry in {}",
				action.value, RequestValues.escape(group), this.actions.maxActions(), this.actions.window(), wait);
		throw new ActionFailedException(Kind.TOO_MANY_ACTIONS, "Too many actions on group "
				+ RequestValues.escape(group) + ": it accepts " + this.actions.maxActions() + " within "
				+ this.actions.window() + " (leader-election.endpoint.max-actions-per-group, "
				+ "leader-election.endpoint.action-window), since each may leave it without a leader for up to a "
				+ "lease duration; retry in " + wait.toSeconds() + " s", wait);
	}

	private String requireCandidate(String group, @Nullable String candidateId) {
		if (candidateId == null || candidateId.isBlank()) {
			throw new ActionFailedException(Kind.BAD_REQUEST,
					"Missing candidateId: force-leader needs the candidateId of the candidate to make leader, such as "
							+ "{\"candidateId\": \"" + this.registry.candidateId() + "\"}");
		}
		RequestValues.requireValid("candidateId", candidateId);
		ParticipantsLookup.Result participants = participants(List.of(group)).get(group);
		List<String> known = (participants != null && participants.answered()) ? participants.ids() : null;
		if (known != null && !known.contains(candidateId)) {
			throw new ActionFailedException(Kind.REFUSED,
					"Unknown candidate " + RequestValues.escape(candidateId) + ": it does not take part in group "
							+ RequestValues.escape(group) + "; its candidates are " + known);
		}
		return candidateId;
	}

	private GroupDescriptor describe(LeaderElection election, ParticipantsLookup.@Nullable Result participants) {
		GroupState state = GroupState.of(election, this.registry);
		LeaderInfo leader = state.leader().orElse(null);
		Observed since = this.observed.get(election.group());
		JobsView.GroupJobs jobs = jobsOf(election);
		return new GroupDescriptor(state.role(), state.phaseName(), election.candidateId(),
				(leader != null) ? leader.candidateId() : null, (leader != null) ? leader.term() : null,
				(since != null && since.leader().equals(leader)) ? since.at().toString() : null, state.backend(),
				state.leaseRemaining().map(GroupState::format).orElse(null), state.consecutiveFailures(),
				!state.storeUnreachable(), state.sinceStoreAnswered().map(GroupState::format).orElse(null),
				(participants != null) ? participants.ids() : null,
				(participants != null) ? participants.answered() : null, this.history.of(election.group()), jobs.jobs(),
				jobs.others());
	}

	private JobsView.GroupJobs jobsOf(LeaderElection election) {
		JobsView view = this.jobs;
		return (view != null) ? view.of(election, readBudget()) : JobsView.GroupJobs.NONE;
	}

	/**
	 * The participants of the groups, asked of the store all at once and for one retry
	 * period in total; empty without a store that lists them.
	 */
	private Map<String, ParticipantsLookup.Result> participants(List<String> groups) {
		if (this.participants == null) {
			return Map.of();
		}
		return this.participants.lookUp(groups, readBudget());
	}

	private Duration readBudget() {
		return (this.registry instanceof LeaderElectionEngine engine) ? engine.timing().retryPeriod()
				: DEFAULT_READ_BUDGET;
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
			throw new ActionFailedException(Kind.BAD_REQUEST, "Unknown action " + RequestValues.escape(value)
					+ ": use one of yield, force-leader, force-reelection");
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
	 * @param phase where the group's election stands on this instance, such as
	 * {@code staying-out} (see {@link GroupPhase}); absent for a registry of the
	 * application's own
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
	 * @param viewAge time since the store last answered this group's election (ISO-8601):
	 * how old the leader and term shown are; {@code null} before it ever answered
	 * @param participants the group's candidates, when the store can tell
	 * @param participantsCurrent with a store that lists participants, whether it listed
	 * them within this read's budget (one retry period for all groups); {@code false}
	 * shows those last listed, if any
	 * @param history the group's last transitions as this instance saw them (at most
	 * {@value LeadershipHistory#DEFAULT_SIZE}), oldest first
	 * @param jobs the group's scheduled leader-only methods, with their last run
	 * @param otherJobs the runs the store records in the group under names no scheduled
	 * method of this instance has (a method renamed or removed, or one of another version
	 * of the application): not run or caught up here
	 */
	public record GroupDescriptor(String role, @JsonInclude(Include.NON_NULL) @Nullable String phase,
			String candidateId, @JsonInclude(Include.ALWAYS) @Nullable String leader,
			@JsonInclude(Include.ALWAYS) @Nullable Long term, @Nullable String leaderSince, String backend,
			@Nullable String leaseRemaining, int consecutiveFailures, boolean storeReachable, @Nullable String viewAge,
			@Nullable List<String> participants, @JsonInclude(Include.NON_NULL) @Nullable Boolean participantsCurrent,
			List<LeadershipTransition> history, @JsonInclude(Include.NON_EMPTY) List<JobsView.JobDescriptor> jobs,
			@JsonInclude(Include.NON_EMPTY) List<JobsView.OtherJobDescriptor> otherJobs)
			implements
				OperationResponseBody {

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
