package io.github.leaderelection.spi;

import java.time.Duration;
import java.util.Map;

/**
 * A store that keeps a list of the live candidates, which balancing spreads leadership
 * over. An engine that balances refuses to start on a store without it.
 */
public interface CandidateListStore extends LeaseStore {

	/**
	 * Keeps a candidate on the list: the candidate's entry, with its weight, lasts
	 * {@code ttl} from now by the store's clock. One request, which also answers with
	 * every candidate whose entry has not run out, this one included. The weight is 0
	 * while the candidate is starting (its elections have not all joined their groups
	 * yet): it is listed, with no share of the groups.
	 * @param candidateId the candidate
	 * @param weight its weight
	 * @param ttl how long its entry lasts
	 * @param timeout how long the call may take
	 * @return the live candidates and their weights
	 */
	Map<String, Integer> keepCandidateAlive(String candidateId, int weight, Duration ttl, Duration timeout);

	/**
	 * Takes a candidate off the list at once (it is shutting down), so that the others
	 * spread its groups without waiting for its entry to run out.
	 * @param candidateId the candidate
	 * @param timeout how long the call may take
	 */
	void removeCandidate(String candidateId, Duration timeout);

}
