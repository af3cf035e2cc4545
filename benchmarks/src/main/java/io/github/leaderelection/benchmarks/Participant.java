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

	/**
	 * Store calls so far by method ({@code method:calls;...}, failed calls as
	 * {@code method!}), empty where the contender cannot be counted.
	 */
	default String storeCallsByMethod() {
		return "";
	}

	/**
	 * How many groups each live candidate leads, as this candidate's balancing last
	 * counted them; empty when it does not balance.
	 */
	default java.util.Map<String, Integer> leadersByCandidate() {
		return java.util.Map.of();
	}

	/** Stops competing, releasing what the contender releases on a graceful stop. */
	@Override
	void close() throws Exception;

	/** Prints the protocol lines the coordinator reads. */
	interface Events {

		void granted(String group);

		/**
		 * @param reason why, as the contender tells it ({@code RevocationReason} name, or
		 * {@code -} where it does not)
		 */
		void revoked(String group, String reason);

		/**
		 * The election is stopped and the leases released; only connections remain to
		 * close.
		 */
		default void released() {
		}

		/**
		 * A store call of this starter's engine ended (where the node traces calls): its
		 * method and when it was sent and answered, {@link System#nanoTime()}.
		 */
		default void called(String method, long startNanos, long endNanos) {
		}

	}

}
