package io.github.leaderelection.engine;

import java.util.concurrent.Callable;

import io.github.leaderelection.LeaderElectionException;
import io.github.leaderelection.spi.LeaseStore;

/**
 * The store calls a group's API makes on the caller's thread (read the leader, force,
 * clear, claim a run), with one wording for their failures.
 */
final class CallerCalls {

	private final String group;

	private final LeaseStore store;

	CallerCalls(String group, LeaseStore store) {
		this.group = group;
		this.store = store;
	}

	/**
	 * Makes the call.
	 * @throws LeaderElectionException naming the operation, the group and the store, if
	 * the call fails
	 */
	<T> T call(String operation, Callable<T> call) {
		try {
			return call.call();
		}
		catch (Exception ex) {
			throw new LeaderElectionException("Could not " + operation + " in group '" + this.group + "' ("
					+ this.store.backend() + " store): " + ex.getMessage(), ex);
		}
	}

}
