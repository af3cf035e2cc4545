package io.github.leaderelection.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Makes this instance a follower of groups, led by another candidate, before each test of
 * a {@code @SpringBootTest} (on the class) or before one test (on the method, which then
 * wins over the class), and waits until the change has been delivered. Needs
 * {@code leader-election.backend=in-memory}.
 *
 * @see LeaderElectionTestSupport#becomeFollower(String)
 */
@Target({ ElementType.TYPE, ElementType.METHOD })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(LeaderElectionExtension.class)
@AutoConfigureLeaderElectionTestSupport
public @interface AsFollower {

	/**
	 * Groups to follow; empty for the application's group
	 * ({@code leader-election.group}).
	 */
	String[] groups() default {};

}
