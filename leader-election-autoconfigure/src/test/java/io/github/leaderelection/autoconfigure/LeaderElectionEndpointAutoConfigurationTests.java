package io.github.leaderelection.autoconfigure;

import java.util.List;

import io.github.leaderelection.actuate.LeaderElectionEndpoint;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.jmx.JmxEndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.Operation;
import org.springframework.boot.actuate.endpoint.jmx.ExposableJmxEndpoint;
import org.springframework.boot.actuate.endpoint.jmx.JmxEndpointsSupplier;
import org.springframework.boot.actuate.endpoint.jmx.JmxOperation;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jmx.JmxAutoConfiguration;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link LeaderElectionEndpointAutoConfiguration} and the endpoint's access.
 */
class LeaderElectionEndpointAutoConfigurationTests {

	// Converts 'read-only' and the like to Access, as SpringApplication's environment
	// does.
	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withInitializer((context) -> context.getEnvironment().setConversionService(new ApplicationConversionService()))
		.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class,
				LeaderElectionEndpointAutoConfiguration.class))
		.withPropertyValues("leader-election.backend=in-memory");

	/**
	 * Discovers the endpoint's operations as Actuator does, here for JMX; access applies
	 * to the web alike.
	 */
	private final ApplicationContextRunner discoveringContextRunner = this.contextRunner
		.withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class, JmxAutoConfiguration.class,
				JmxEndpointAutoConfiguration.class))
		.withPropertyValues("spring.jmx.enabled=true", "spring.jmx.unique-names=true",
				"management.endpoints.jmx.exposure.include=leaderelection");

	@Test
	void createsEndpointWhenExposed() {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=leaderelection")
			.run((context) -> assertThat(context).hasSingleBean(LeaderElectionEndpoint.class));
	}

	@Test
	void backsOffWhenNotExposed() {
		this.contextRunner.run((context) -> assertThat(context).doesNotHaveBean(LeaderElectionEndpoint.class));
	}

	@Test
	void backsOffWhenAccessIsNone() {
		this.contextRunner
			.withPropertyValues("management.endpoints.web.exposure.include=leaderelection",
					"management.endpoint.leaderelection.access=none")
			.run((context) -> assertThat(context).doesNotHaveBean(LeaderElectionEndpoint.class));
	}

	@Test
	void backsOffWhenLeaderElectionIsDisabled() {
		this.contextRunner
			.withPropertyValues("management.endpoints.web.exposure.include=leaderelection",
					"leader-election.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(LeaderElectionEndpoint.class));
	}

	@Test
	void offersOnlyReadOperationsByDefault() {
		this.discoveringContextRunner
			.run((context) -> assertThat(operations(context)).containsExactlyInAnyOrder("READ groups", "READ group"));
	}

	@Test
	void offersWriteOperationsWithUnrestrictedAccess() {
		this.discoveringContextRunner.withPropertyValues("management.endpoint.leaderelection.access=unrestricted")
			.run((context) -> assertThat(operations(context)).containsExactlyInAnyOrder("READ groups", "READ group",
					"WRITE act", "WRITE actOnInstance"));
	}

	@Test
	void offersOnlyReadOperationsWhenAccessIsCappedToReadOnly() {
		this.discoveringContextRunner
			.withPropertyValues("management.endpoint.leaderelection.access=unrestricted",
					"management.endpoints.access.max-permitted=read-only")
			.run((context) -> assertThat(operations(context)).containsExactlyInAnyOrder("READ groups", "READ group"));
	}

	private static List<String> operations(AssertableApplicationContext context) {
		ExposableJmxEndpoint endpoint = context.getBean(JmxEndpointsSupplier.class)
			.getEndpoints()
			.stream()
			.filter((candidate) -> candidate.getEndpointId().toString().equals("leaderelection"))
			.findFirst()
			.orElseThrow();
		return endpoint.getOperations().stream().map(LeaderElectionEndpointAutoConfigurationTests::describe).toList();
	}

	private static String describe(JmxOperation operation) {
		return ((Operation) operation).getType() + " " + operation.getName();
	}

}
