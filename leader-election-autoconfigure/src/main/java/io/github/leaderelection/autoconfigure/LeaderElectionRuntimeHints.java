package io.github.leaderelection.autoconfigure;

import java.lang.reflect.Modifier;

import io.github.leaderelection.actuate.LeaderElectionEndpoint;
import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.util.ClassUtils;

/**
 * What the starter needs at run time beyond what Spring's AOT processing finds by itself,
 * for an application compiled to a native image.
 *
 * <p>
 * Most of the starter needs nothing here: its proxies ({@code @OnlyOnLeader} beans, the
 * timed lease store) are made by post-processors that announce their bean types, so AOT
 * generates their classes at build time, and {@code @ConfigurationProperties} binding is
 * covered by Boot. What is left:
 * <ul>
 * <li>the endpoint's response bodies, serialized by Jackson: Boot registers an
 * operation's declared return type, which says nothing about the body when the operation
 * returns a {@code WebEndpointResponse} or {@code Object};</li>
 * <li>the PostgreSQL driver's {@code PGConnection}, which the JDBC store looks up by name
 * to decide whether it can listen for notifications;</li>
 * <li>the field of the task Spring wraps each scheduled task in, which the scheduled
 * leader-only methods read to find the method a task calls.</li>
 * </ul>
 */
class LeaderElectionRuntimeHints implements RuntimeHintsRegistrar {

	static final String PG_CONNECTION = "org.postgresql.PGConnection";

	static final String SCHEDULED_TASK = "org.springframework.scheduling.config.Task";

	static final String OUTCOME_TRACKING_TASK = SCHEDULED_TASK + "$OutcomeTrackingRunnable";

	private final BindingReflectionHintsRegistrar bindings = new BindingReflectionHintsRegistrar();

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		if (ClassUtils.isPresent("org.springframework.boot.actuate.endpoint.annotation.Endpoint", classLoader)) {
			for (Class<?> nested : LeaderElectionEndpoint.class.getDeclaredClasses()) {
				if (Modifier.isPublic(nested.getModifiers())) {
					this.bindings.registerReflectionHints(hints.reflection(), nested);
				}
			}
		}
		hints.reflection().registerType(TypeReference.of(PG_CONNECTION));
		hints.reflection()
			.registerType(TypeReference.of(OUTCOME_TRACKING_TASK),
					(type) -> type.withField("runnable").onReachableType(TypeReference.of(SCHEDULED_TASK)));
	}

}
