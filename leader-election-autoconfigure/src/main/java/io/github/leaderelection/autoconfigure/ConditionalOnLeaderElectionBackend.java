package io.github.leaderelection.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.context.annotation.Conditional;

/**
 * Matches when a backend is the one to elect through: selected by
 * {@code leader-election.backend} and usable, or, when the property is not set, the only
 * one detected.
 */
@Target({ ElementType.TYPE, ElementType.METHOD })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Conditional(OnLeaderElectionBackendCondition.class)
@interface ConditionalOnLeaderElectionBackend {

	/** The backend. */
	LeaderElectionBackend value();

}
