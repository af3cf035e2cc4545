package io.github.leaderelection.actuate;

/**
 * Told of every write operation asked of the {@code leaderelection} endpoint for a group,
 * such as a meter counting them.
 */
@FunctionalInterface
interface OperatorActionCounter {

	/**
	 * An action was asked.
	 * @param group the group
	 * @param action {@code yield}, {@code force-leader} or {@code force-reelection}
	 * @param outcome {@code done}, {@code failed} or {@code limited} (refused: too many
	 * in the window)
	 */
	void count(String group, String action, String outcome);

}
