package io.github.leaderelection.test;

import java.lang.annotation.Annotation;
import java.lang.reflect.AnnotatedElement;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.context.ApplicationContext;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.test.context.junit.jupiter.SpringExtension;

/**
 * Applies {@link AsLeader} and {@link AsFollower} before each test, through the
 * {@link LeaderElectionTestSupport} bean of the test's application context.
 */
public class LeaderElectionExtension implements BeforeEachCallback {

	@Override
	public void beforeEach(ExtensionContext context) {
		Role role = find(context.getRequiredTestMethod());
		if (role == null) {
			role = find(context.getRequiredTestClass());
		}
		if (role == null) {
			return;
		}
		ApplicationContext applicationContext = SpringExtension.getApplicationContext(context);
		LeaderElectionTestSupport support = applicationContext.getBeanProvider(LeaderElectionTestSupport.class)
			.getIfAvailable();
		if (support == null) {
			throw new IllegalStateException("@AsLeader and @AsFollower need the LeaderElectionTestSupport bean, which "
					+ "@AutoConfigureLeaderElectionTestSupport on the test class adds (class-level @AsLeader and "
					+ "@AsFollower imply it). Used on methods only, annotate the class with it. Or is "
					+ "leader-election.enabled false?");
		}
		List<String> groups = (role.groups().length > 0) ? List.of(role.groups()) : List.of(support.defaultGroup());
		for (String group : groups) {
			if (role.leader()) {
				support.becomeLeader(group);
			}
			else {
				support.becomeFollower(group);
			}
		}
	}

	private static @Nullable Role find(AnnotatedElement element) {
		AsLeader leader = findAnnotation(element, AsLeader.class);
		AsFollower follower = findAnnotation(element, AsFollower.class);
		if (leader != null && follower != null) {
			throw new IllegalStateException(element + " is annotated with both @AsLeader and @AsFollower; keep one");
		}
		if (leader != null) {
			return new Role(true, leader.groups());
		}
		return (follower != null) ? new Role(false, follower.groups()) : null;
	}

	private static <A extends Annotation> @Nullable A findAnnotation(AnnotatedElement element, Class<A> type) {
		if (element instanceof Class<?> testClass) {
			// Also looks at the enclosing classes of @Nested tests.
			return TestContextAnnotationUtils.findMergedAnnotation(testClass, type);
		}
		return AnnotatedElementUtils.findMergedAnnotation(element, type);
	}

	private record Role(boolean leader, String[] groups) {

	}

}
