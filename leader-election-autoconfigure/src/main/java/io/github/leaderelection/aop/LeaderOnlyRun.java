package io.github.leaderelection.aop;

import io.github.leaderelection.Leadership;

/**
 * A run of a leader-only method that is under way: a call on a thread, or a subscription
 * to the publisher a reactive method returned. A revocation interrupts it (where its
 * method asks for that) and a shutdown waits for it.
 */
interface LeaderOnlyRun {

	/** The leadership the run started under. */
	Leadership leadership();

	/** Whether a revocation of its leadership is to stop the run. */
	boolean interruptOnRevoke();

	/** Stops the run, unless it has already ended. */
	void interrupt();

	/**
	 * Waits until the run has ended or {@code deadline} (on the nanoTime clock) has
	 * passed.
	 * @return whether the run ended
	 */
	boolean await(long deadline);

	/** Where the run is, for a log line: {@code "on thread 'x'"}. */
	String where();

}
