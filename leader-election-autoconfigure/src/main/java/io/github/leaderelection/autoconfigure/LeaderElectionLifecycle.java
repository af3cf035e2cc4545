package io.github.leaderelection.autoconfigure;

import java.util.List;

import io.github.leaderelection.LeaderElectionListener;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.engine.LeaderElectionEngine;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.event.SmartApplicationListener;
import org.springframework.core.Ordered;

/**
 * Runs the election while the application is up: adds the {@link LeaderElectionListener}
 * beans to the registry once all singletons exist, starts the engine when the application
 * is ready (no leader-only work while the context is still starting), and closes it as
 * soon as the context starts closing.
 *
 * <p>
 * Closing on {@link ContextClosedEvent}, with the highest precedence, comes before
 * anything else the context shuts down: the event is published before any
 * {@code Lifecycle} bean is stopped and before any bean is destroyed, and before the task
 * executors and schedulers, which listen for the same event, stop accepting tasks. So
 * leader-only methods that run on them, and the DataSource the lease is released through,
 * are still there while the engine waits for those methods and then releases the leases.
 */
class LeaderElectionLifecycle implements SmartInitializingSingleton, SmartApplicationListener, ApplicationContextAware {

	private final LeaderElectionRegistry registry;

	private final ObjectProvider<LeaderElectionListener> listeners;

	private @Nullable ApplicationContext applicationContext;

	LeaderElectionLifecycle(LeaderElectionRegistry registry, ObjectProvider<LeaderElectionListener> listeners) {
		this.registry = registry;
		this.listeners = listeners;
	}

	@Override
	public void setApplicationContext(ApplicationContext applicationContext) {
		this.applicationContext = applicationContext;
	}

	@Override
	public void afterSingletonsInstantiated() {
		List<LeaderElectionListener> ordered = this.listeners.orderedStream().toList();
		ordered.forEach(this.registry::addListener);
	}

	@Override
	public boolean supportsEventType(Class<? extends ApplicationEvent> eventType) {
		return ApplicationReadyEvent.class.isAssignableFrom(eventType)
				|| ContextClosedEvent.class.isAssignableFrom(eventType);
	}

	@Override
	public void onApplicationEvent(ApplicationEvent event) {
		if (!(this.registry instanceof LeaderElectionEngine engine)) {
			return;
		}
		if (event instanceof ApplicationReadyEvent ready && ready.getApplicationContext() == this.applicationContext) {
			engine.start();
		}
		else if (event instanceof ContextClosedEvent closed
				&& closed.getApplicationContext() == this.applicationContext) {
			engine.close();
		}
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

}
