package io.github.leaderelection.test;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.autoconfigure.LeaderElectionAutoConfiguration;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link AsLeader} and {@link AsFollower} in a {@code @SpringBootTest}.
 */
// A short lease: the first switch from follower back to leader waits out the lease this
// instance took when the election started.
@SpringBootTest(classes = LeaderElectionExtensionTests.Application.class,
		properties = { "leader-election.backend=in-memory", "leader-election.group=orders",
				"leader-election.lease-duration=3s", "leader-election.renew-deadline=2s",
				"leader-election.retry-period=500ms", "spring.main.banner-mode=off" })
@AsFollower
class LeaderElectionExtensionTests {

	@Autowired
	private LeaderElection election;

	@Autowired
	private LeaderElectionRegistry registry;

	@Test
	void classAnnotationMakesThisInstanceAFollower() {
		assertThat(this.election.isLeader()).isFalse();
		assertThat(this.election.currentLeader().orElseThrow().candidateId())
			.isEqualTo(LeaderElectionTestSupport.OTHER_CANDIDATE);
	}

	@Test
	@AsLeader
	void methodAnnotationWinsOverTheClass() {
		assertThat(this.election.isLeader()).isTrue();
	}

	@Test
	@AsLeader(groups = { "billing", "shipping" })
	void leadsTheNamedGroups() {
		assertThat(this.registry.find("billing").orElseThrow().isLeader()).isTrue();
		assertThat(this.registry.find("shipping").orElseThrow().isLeader()).isTrue();
	}

	@Nested
	class WithinANestedClass {

		@Test
		void theEnclosingClassAnnotationApplies() {
			assertThat(LeaderElectionExtensionTests.this.election.isLeader()).isFalse();
		}

	}

	/**
	 * The application's auto-configuration only: the class-level @AsFollower adds the
	 * test support.
	 */
	@SpringBootConfiguration
	@ImportAutoConfiguration(LeaderElectionAutoConfiguration.class)
	static class Application {

	}

}
