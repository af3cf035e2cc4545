package io.github.leaderelection.actuate;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionRegistry;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * Reports whether the elections of this instance can work, with who leads each group.
 *
 * <p>
 * Leading is not health: the leader and the followers are all {@code UP}. The indicator
 * is {@code DOWN} only while this instance can neither lead nor take over in some group:
 * its store has not answered for longer than the renew deadline, or another live process
 * uses this instance's candidate id (detail {@code conflict}). Taking the status costs no
 * I/O: it reports what the election loop last saw.
 */
public class LeaderElectionHealthIndicator extends AbstractHealthIndicator {

	private final LeaderElectionRegistry registry;

	public LeaderElectionHealthIndicator(LeaderElectionRegistry registry) {
		super("Leader election health check failed");
		this.registry = Objects.requireNonNull(registry, "registry");
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		Map<String, Object> groups = new TreeMap<>();
		boolean unreachable = false;
		for (LeaderElection election : this.registry.elections()) {
			GroupState state = GroupState.of(election, this.registry);
			unreachable |= state.storeUnreachable() || state.conflict().isPresent();
			groups.put(state.group(), details(state));
		}
		builder.status(unreachable ? Status.DOWN : Status.UP);
		builder.withDetail("candidateId", this.registry.candidateId()).withDetail("groups", groups);
	}

	private static Map<String, Object> details(GroupState state) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("role", state.role());
		state.leader().ifPresent((leader) -> {
			details.put("leader", leader.candidateId());
			details.put("term", leader.term());
		});
		state.leaseRemaining().ifPresent((remaining) -> details.put("leaseRemaining", GroupState.format(remaining)));
		details.put("backend", state.backend());
		details.put("consecutiveFailures", state.consecutiveFailures());
		details.put("storeReachable", !state.storeUnreachable());
		state.conflict().ifPresent((conflict) -> details.put("conflict", conflict));
		return details;
	}

}
