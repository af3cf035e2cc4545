package io.github.leaderelection.spi;

import java.util.Map;
import java.util.Set;

/**
 * A batch that answered for some of its groups and failed, or ran out of time, before it
 * answered for the others: it hands over what it did, so that nothing done is thrown away
 * (a lease taken, a renewal that went through), and the engine handles the groups it did
 * not answer for as failed calls.
 */
public class BatchCutShortException extends RuntimeException {

	private final Set<String> answered;

	private final Map<String, Lease> leases;

	/**
	 * @param answered the groups the batch answered for
	 * @param leases what it answered, by group: the lease read, taken or renewed; a group
	 * answered for and missing here was never led, held by another candidate, or refused
	 * @param cause why the batch stopped
	 */
	public BatchCutShortException(Set<String> answered, Map<String, Lease> leases, Throwable cause) {
		super("A batch answered for " + answered.size() + " group(s) and stopped: " + cause.getMessage(), cause);
		this.answered = Set.copyOf(answered);
		this.leases = Map.copyOf(leases);
	}

	/**
	 * The groups the batch answered for.
	 * @return the groups
	 */
	public Set<String> answered() {
		return this.answered;
	}

	/**
	 * What the batch answered, by group: the lease read, taken or renewed.
	 * @return the leases
	 */
	public Map<String, Lease> leases() {
		return this.leases;
	}

}
