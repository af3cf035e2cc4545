package io.github.leaderelection.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;

/**
 * Adds {@link LeaderElectionTestSupport} to the application context of a Spring Boot
 * test, so that it can make this instance the leader or a follower of a group.
 * Class-level {@link AsLeader @AsLeader} and {@link AsFollower @AsFollower} imply it; a
 * test class that uses them only on methods, or injects
 * {@link LeaderElectionTestSupport}, declares it.
 *
 * <pre class="code">
 * &#64;SpringBootTest(properties = "leader-election.backend=in-memory")
 * &#64;AutoConfigureLeaderElectionTestSupport
 * class DispatcherTests { ... }
 * </pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration
public @interface AutoConfigureLeaderElectionTestSupport {

}
