package io.github.leaderelection.lifecycle;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a {@link org.springframework.context.Lifecycle Lifecycle} bean (a message listener
 * container, a poller, any {@link org.springframework.context.SmartLifecycle
 * SmartLifecycle}) only while this instance leads a group: the context does not start it,
 * the election starts it when leadership is granted and stops it when leadership is
 * revoked. Put it on the bean's class or on its {@code @Bean} method; the property
 * {@code leader-election.lifecycle.beans} does the same by bean name.
 *
 * <p>
 * Beans start in ascending and stop in descending
 * {@link org.springframework.context.Phased phase} order, on the election's notification
 * thread. A stop waits for the bean's {@code stop(Runnable)} callback for at most
 * {@code leader-election.shutdown-timeout}; on shutdown the lease is released only after
 * that.
 *
 * <p>
 * NOTE: the bean stops after leadership ended, not before: work it started as leader may
 * still be running for a moment while another instance already leads. Fence such work
 * with the {@link io.github.leaderelection.Leadership#term() term}.
 */
@Target({ ElementType.TYPE, ElementType.METHOD })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface LeaderOnlyLifecycle {

	/**
	 * Group whose leader runs the bean; empty for the application's group
	 * ({@code leader-election.group}). A group named here is joined at startup.
	 */
	String group() default "";

}
