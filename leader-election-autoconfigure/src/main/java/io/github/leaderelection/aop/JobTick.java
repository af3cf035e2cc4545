package io.github.leaderelection.aop;

import io.github.leaderelection.RunOutcome;
import io.github.leaderelection.RunRecord;
import org.jspecify.annotations.Nullable;

/**
 * The tick of a scheduled leader-only method that the scheduler fires on this thread
 * ({@link ScheduledTicks#fire}): once the gate has found this instance leading, it claims
 * the tick before the method runs, and records how the run ended.
 */
public interface JobTick {

	/**
	 * The name of the scheduled method the tick is of: the gate claims it only for a call
	 * of that method, not for leader-only methods the job calls in turn.
	 * @return the method's name
	 */
	String methodName();

	/**
	 * Claims the tick in the group's run records, fenced by this instance's lease. Never
	 * throws: a tick that cannot be claimed, because it was already or because the store
	 * failed, is not run, and the reason is logged.
	 * @return the run claimed, or null when the method is not to run
	 */
	@Nullable RunRecord claim();

	/**
	 * Records how a claimed run ended. Never throws.
	 * @param run the run {@link #claim()} returned
	 * @param outcome how it ended
	 */
	void finish(RunRecord run, RunOutcome outcome);

}
