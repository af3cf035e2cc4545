package io.github.leaderelection;

/**
 * How a run of leader-only work ended, as its run record says.
 */
public enum RunOutcome {

	/** Claimed and not finished yet, or its leader stopped before it could say. */
	RUNNING,

	/** The work returned or completed normally. */
	SUCCEEDED,

	/** The work threw or completed with an error. */
	FAILED,

	/** The work was interrupted or cancelled, by a revocation or a shutdown. */
	CANCELLED

}
