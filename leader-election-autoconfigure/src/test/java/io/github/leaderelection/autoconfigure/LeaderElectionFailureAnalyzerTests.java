package io.github.leaderelection.autoconfigure;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.env.Environment;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Tests for {@link LeaderElectionFailureAnalyzer}.
 */
class LeaderElectionFailureAnalyzerTests {

	private final LeaderElectionFailureAnalyzer analyzer = new LeaderElectionFailureAnalyzer();

	@Test
	void isRegisteredAheadOfBootsAnalyzers() {
		List<FailureAnalyzer> analyzers = SpringFactoriesLoader.forDefaultResourceLocation()
			.load(FailureAnalyzer.class,
					SpringFactoriesLoader.ArgumentResolver.of(BeanFactory.class, new DefaultListableBeanFactory())
						.and(Environment.class, new MockEnvironment()),
					// as Boot does: analyzers of absent technologies are left out
					SpringFactoriesLoader.FailureHandler.handleMessage((message, failure) -> {
					}));
		assertThat(analyzers).isNotEmpty();
		assertThat(analyzers.get(0)).isInstanceOf(LeaderElectionFailureAnalyzer.class);
	}

	@Test
	void reportsConfigurationExceptionWrappedInOtherFailures() {
		RuntimeException failure = new IllegalStateException("Could not create bean",
				new LeaderElectionConfigurationException("Invalid value 'x' for leader-election.group", "Fix it."));
		FailureAnalysis analysis = this.analyzer.analyze(failure);
		assertThat(analysis.getDescription()).isEqualTo("Invalid value 'x' for leader-election.group");
		assertThat(analysis.getAction()).isEqualTo("Fix it.");
	}

	@Test
	void reportsValuesOfOwnPropertiesThatCannotBeBound() {
		FailureAnalysis analysis = this.analyzer
			.analyze(bindFailure("leader-election.release-on-shutdown", "maybe", Boolean.class));
		assertThat(analysis.getDescription())
			.startsWith("Invalid value 'maybe' for leader-election.release-on-shutdown");
		assertThat(analysis.getAction()).isEqualTo("Set leader-election.release-on-shutdown to true or false.");
	}

	@Test
	void ignoresPropertiesOfOthers() {
		assertThat(this.analyzer.analyze(bindFailure("spring.main.lazy-initialization", "maybe", Boolean.class)))
			.isNull();
	}

	@Test
	void ignoresUnrelatedFailures() {
		assertThat(this.analyzer.analyze(new IllegalStateException("boom"))).isNull();
	}

	private static BindException bindFailure(String name, String value, Class<?> type) {
		Binder binder = new Binder(new MapConfigurationPropertySource(Map.of(name, value)));
		return catchThrowableOfType(BindException.class, () -> binder.bind(name, type));
	}

}
