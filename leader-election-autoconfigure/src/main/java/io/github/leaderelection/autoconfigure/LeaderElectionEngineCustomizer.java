package io.github.leaderelection.autoconfigure;

import io.github.leaderelection.engine.LeaderElectionEngine;

/**
 * Callback for beans that customize the auto-configured {@link LeaderElectionEngine}
 * before it is built, after the {@code leader-election.*} properties have been applied.
 * To elect through another store, declare a {@code LeaseStore} bean instead; to use
 * another database, mark its {@code DataSource} with
 * {@link LeaderElectionDataSource @LeaderElectionDataSource}.
 */
@FunctionalInterface
public interface LeaderElectionEngineCustomizer {

	/**
	 * Customizes the engine's builder.
	 * @param builder the builder to customize
	 */
	void customize(LeaderElectionEngine.Builder builder);

}
