package io.github.leaderelection.autoconfigure;

import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;

import io.github.leaderelection.actuate.LeaderElectionEndpoint;
import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.support.SpringFactoriesLoader;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link LeaderElectionRuntimeHints}.
 */
class LeaderElectionRuntimeHintsTests {

	private final RuntimeHints hints = new RuntimeHints();

	@Test
	void isRegisteredInAotFactories() {
		List<RuntimeHintsRegistrar> registrars = SpringFactoriesLoader
			.forResourceLocation("META-INF/spring/aot.factories")
			.load(RuntimeHintsRegistrar.class);
		assertThat(registrars).hasAtLeastOneElementOfType(LeaderElectionRuntimeHints.class);
	}

	@Test
	void registersEveryEndpointResponseBodyForJackson() {
		new LeaderElectionRuntimeHints().registerHints(this.hints, getClass().getClassLoader());
		List<Class<?>> bodies = Arrays.stream(LeaderElectionEndpoint.class.getDeclaredClasses())
			.filter((type) -> Modifier.isPublic(type.getModifiers()))
			.toList();
		assertThat(bodies).isNotEmpty();
		for (Class<?> body : bodies) {
			assertThat(RuntimeHintsPredicates.reflection()
				.onType(body)
				.withMemberCategories(MemberCategory.INVOKE_DECLARED_CONSTRUCTORS)).as(body.getName())
				.accepts(this.hints);
			for (var component : body.getRecordComponents() != null ? body.getRecordComponents()
					: new java.lang.reflect.RecordComponent[0]) {
				assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(component.getAccessor()))
					.as(body.getSimpleName() + "." + component.getName())
					.accepts(this.hints);
			}
		}
	}

	@Test
	void registersThePostgresConnectionTypeTheJdbcStoreLooksUpByName() {
		new LeaderElectionRuntimeHints().registerHints(this.hints, getClass().getClassLoader());
		assertThat(
				RuntimeHintsPredicates.reflection().onType(TypeReference.of(LeaderElectionRuntimeHints.PG_CONNECTION)))
			.accepts(this.hints);
	}

	@Test
	void registersTheFieldOfTheTaskSpringWrapsScheduledTasksIn() throws ClassNotFoundException {
		new LeaderElectionRuntimeHints().registerHints(this.hints, getClass().getClassLoader());
		assertThat(RuntimeHintsPredicates.reflection()
			.onFieldAccess(LeaderElectionRuntimeHints.OUTCOME_TRACKING_TASK, "runnable")).accepts(this.hints);
	}

}
