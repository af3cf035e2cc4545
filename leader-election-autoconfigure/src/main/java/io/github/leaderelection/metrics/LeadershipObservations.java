package io.github.leaderelection.metrics;

import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.Leadership;
import io.github.leaderelection.RevocationReason;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

/**
 * Records each grant and revocation of this instance as a Micrometer {@link Observation}
 * named {@value #TRANSITION}, so that traces show when leadership moved next to the
 * application's own work. Low-cardinality key values: {@code type} ({@code granted},
 * {@code revoked}), {@code group} (the groups of an application are few and fixed) and
 * {@code reason} (of a revocation); high-cardinality: {@code term} and {@code candidate}.
 */
class LeadershipObservations implements LeaderElectionListener {

	/** The name of the observation of one transition. */
	static final String TRANSITION = "leader.election.transition";

	private final ObservationRegistry registry;

	/**
	 * Creates the listener.
	 * @param registry where to record the observations
	 */
	LeadershipObservations(ObservationRegistry registry) {
		this.registry = registry;
	}

	@Override
	public void granted(Leadership leadership) {
		observe(leadership, "granted", "none");
	}

	@Override
	public void revoked(Leadership leadership, RevocationReason reason) {
		observe(leadership, "revoked", reason.name());
	}

	private void observe(Leadership leadership, String type, String reason) {
		Observation.createNotStarted(TRANSITION, this.registry)
			.lowCardinalityKeyValue("type", type)
			.lowCardinalityKeyValue("group", leadership.group())
			.lowCardinalityKeyValue("reason", reason)
			.highCardinalityKeyValue("term", Long.toString(leadership.term()))
			.highCardinalityKeyValue("candidate", leadership.candidateId())
			.observe(() -> {
			});
	}

}
