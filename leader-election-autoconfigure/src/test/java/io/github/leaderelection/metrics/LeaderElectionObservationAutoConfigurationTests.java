package io.github.leaderelection.metrics;

import java.time.Duration;

import io.github.leaderelection.testing.ApplicationReady;
import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.autoconfigure.LeaderElectionAutoConfiguration;
import io.github.leaderelection.autoconfigure.LeaderElectionObservationAutoConfiguration;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link LeaderElectionObservationAutoConfiguration}: store calls and
 * transitions show up as spans of an in-memory tracer.
 */
class LeaderElectionObservationAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class,
				LeaderElectionObservationAutoConfiguration.class))
		.withPropertyValues("leader-election.backend=in-memory", "spring.application.name=orders",
				"leader-election.candidate-id=node-1");

	@Test
	void tracesCarryTheStoreCallsAndTheTransitions() {
		SimpleTracer tracer = new SimpleTracer();
		this.contextRunner.withBean(ObservationRegistry.class, () -> {
			ObservationRegistry registry = ObservationRegistry.create();
			registry.observationConfig().observationHandler(new DefaultTracingObservationHandler(tracer));
			return registry;
		}).run((context) -> {
			assertThat(context).hasSingleBean(ObservedLeaseStorePostProcessor.class)
				.hasSingleBean(LeadershipObservations.class);
			ApplicationReady.publish(context);
			LeaderElection election = context.getBean(LeaderElection.class);
			await().atMost(Duration.ofSeconds(20)).until(election::isLeader);
			long term = election.leadership().orElseThrow().term();
			await().atMost(Duration.ofSeconds(20))
				.until(() -> tracer.getSpans()
					.stream()
					.anyMatch((span) -> span.getName().equals(LeadershipObservations.TRANSITION)));
			assertThat(tracer.getSpans()).anySatisfy((span) -> {
				assertThat(span.getName()).isEqualTo(ObservedLeaseStorePostProcessor.STORE_CALL);
				assertThat(span.getTags()).containsEntry("operation", "acquire")
					.containsEntry("backend", "in-memory")
					.containsEntry("group", "orders")
					.containsEntry("outcome", "success");
			});
			assertThat(tracer.getSpans()).anySatisfy((span) -> {
				assertThat(span.getName()).isEqualTo(LeadershipObservations.TRANSITION);
				assertThat(span.getTags()).containsEntry("type", "granted")
					.containsEntry("group", "orders")
					.containsEntry("term", Long.toString(term))
					.containsEntry("candidate", "node-1");
			});
			election.yieldLeadership();
			await().atMost(Duration.ofSeconds(20))
				.until(() -> tracer.getSpans()
					.stream()
					.map(SimpleSpan::getTags)
					.anyMatch((tags) -> "revoked".equals(tags.get("type")) && "YIELDED".equals(tags.get("reason"))));
		});
	}

	@Test
	void observesNothingWithoutAnObservationRegistry() {
		this.contextRunner.run((context) -> assertThat(context).hasSingleBean(ObservedLeaseStorePostProcessor.class)
			.doesNotHaveBean(LeadershipObservations.class));
	}

	@Test
	void backsOffWithoutMicrometerObservation() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(ObservationRegistry.class))
			.run((context) -> assertThat(context).doesNotHaveBean(ObservedLeaseStorePostProcessor.class));
	}

}
