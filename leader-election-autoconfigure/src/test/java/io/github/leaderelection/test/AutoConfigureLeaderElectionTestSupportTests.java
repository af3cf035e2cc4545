package io.github.leaderelection.test;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.autoconfigure.LeaderElectionAutoConfiguration;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link AutoConfigureLeaderElectionTestSupport} on a class whose tests use
 * {@link AsLeader} and {@link AsFollower} on methods only, or inject the support.
 */
@SpringBootTest(classes = AutoConfigureLeaderElectionTestSupportTests.Application.class,
		properties = { "leader-election.backend=in-memory", "leader-election.group=orders",
				"spring.main.banner-mode=off" })
@AutoConfigureLeaderElectionTestSupport
class AutoConfigureLeaderElectionTestSupportTests {

	@Autowired
	private LeaderElection election;

	@Autowired
	private LeaderElectionTestSupport support;

	@Test
	@AsFollower
	void methodAnnotationsWork() {
		assertThat(this.election.isLeader()).isFalse();
	}

	@Test
	void theSupportCanBeInjected() {
		this.support.becomeLeader();
		assertThat(this.election.isLeader()).isTrue();
		assertThat(this.support.defaultGroup()).isEqualTo("orders");
	}

	/** The application's auto-configuration only. */
	@SpringBootConfiguration
	@ImportAutoConfiguration(LeaderElectionAutoConfiguration.class)
	static class Application {

	}

}
