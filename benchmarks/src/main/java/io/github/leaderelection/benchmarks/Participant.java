package io.github.leaderelection.benchmarks;

/**
 * One candidate of one contender inside a node JVM, competing in some groups.
 */
interface Participant extends AutoCloseable {

	/** Starts competing in every group. */
	void start() throws Exception;

	/** How many groups this candidate leads now. */
	int led();

	/**
	 * Store calls made so far, counted by the client; -1 where the contender cannot be
	 * counted.
	 */
	default long storeCalls() {
		return -1;
	}

	/** Stops competing, releasing what the contender releases on a graceful stop. */
	@Override
	void close() throws Exception;

	/** Prints the protocol lines the coordinator reads. */
	interface Events {

		void granted(String group);

		void revoked(String group);

		/**
		 * The election is stopped and the leases released; only connections remain to
		 * close.
		 */
		default void released() {
		}

	}

}
