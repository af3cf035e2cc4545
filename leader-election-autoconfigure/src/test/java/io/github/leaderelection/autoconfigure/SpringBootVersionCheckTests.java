package io.github.leaderelection.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Tests for {@link SpringBootVersionCheck}.
 */
class SpringBootVersionCheckTests {

	@Test
	void refusesSpringBoot3WithOneClearMessage() {
		assertThatThrownBy(() -> SpringBootVersionCheck.check("3.5.7", "6.2.12"))
			.isInstanceOf(LeaderElectionConfigurationException.class)
			.hasMessage("The leader election starter requires Spring Boot 4.x (with Spring Framework 7.x) and Java 17 "
					+ "or later, but this application runs Spring Boot 3.5.7 with Spring Framework 6.2.12.")
			.satisfies((ex) -> assertThat(((LeaderElectionConfigurationException) ex).action())
				.startsWith("Upgrade the application to Spring Boot 4.x"));
	}

	@Test
	void refusesAnOlderFrameworkUnderANewerBoot() {
		assertThatThrownBy(() -> SpringBootVersionCheck.check("4.1.0", "6.2.12"))
			.isInstanceOf(LeaderElectionConfigurationException.class);
	}

	@Test
	void acceptsSpringBoot4() {
		assertThatNoException().isThrownBy(() -> SpringBootVersionCheck.check("4.0.0", "7.0.0"));
		assertThatNoException().isThrownBy(() -> SpringBootVersionCheck.check("4.1.0", "7.0.8"));
		assertThatNoException().isThrownBy(() -> SpringBootVersionCheck.check("5.0.0-M1", "8.0.0-SNAPSHOT"));
	}

	@Test
	void acceptsVersionsThatCannotBeRead() {
		assertThatNoException().isThrownBy(() -> SpringBootVersionCheck.check(null, null));
		assertThatNoException().isThrownBy(() -> SpringBootVersionCheck.check("unknown", ""));
	}

	@Test
	void passesOnTheBootThisBuildUses() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class))
			.withPropertyValues("leader-election.backend=in-memory")
			.run((context) -> assertThat(context).hasNotFailed());
	}

}
