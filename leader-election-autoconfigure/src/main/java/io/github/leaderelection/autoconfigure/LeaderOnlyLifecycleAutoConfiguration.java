package io.github.leaderelection.autoconfigure;

import java.util.function.Supplier;

import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.lifecycle.LeaderOnlyLifecycle;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * {@link EnableAutoConfiguration Auto-configuration} for lifecycle beans that run only on
 * the leader: those annotated with {@link LeaderOnlyLifecycle @LeaderOnlyLifecycle} and
 * those named by {@code leader-election.lifecycle.beans}. With
 * {@code leader-election.enabled=false} they start with the context on every instance, as
 * {@code @OnlyOnLeader} methods then run everywhere.
 */
@AutoConfiguration(after = LeaderElectionAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "leader-election.enabled", matchIfMissing = true)
@ConditionalOnBean(LeaderElectionRegistry.class)
public final class LeaderOnlyLifecycleAutoConfiguration {

	/**
	 * The controller is a bean post-processor, created before the other beans: it binds
	 * its properties itself and reaches the registry only lazily.
	 */
	@Bean
	static LeaderOnlyLifecycleController leaderOnlyLifecycleController(ConfigurableListableBeanFactory beanFactory,
			ObjectProvider<LeaderElectionRegistry> registry, ObjectProvider<LeaderElectionProperties> properties,
			Environment environment) {
		LeaderOnlyLifecycleProperties lifecycle = Binder.get(environment)
			.bindOrCreate("leader-election.lifecycle", LeaderOnlyLifecycleProperties.class);
		Supplier<LeaderElectionProperties> election = () -> properties.getIfAvailable(LeaderElectionProperties::new);
		return new LeaderOnlyLifecycleController(beanFactory, registry::getObject,
				() -> election.get().determineGroup(environment), lifecycle.getBeans(),
				() -> election.get().getShutdownTimeout());
	}

}
