package io.github.leaderelection.autoconfigure;

import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * The condition of {@link ConditionalOnLeaderElectionBackend}. It looks at bean
 * definitions, so it is evaluated when beans are registered, after the
 * auto-configurations it is ordered after.
 */
class OnLeaderElectionBackendCondition extends SpringBootCondition implements ConfigurationCondition {

	@Override
	public ConfigurationPhase getConfigurationPhase() {
		return ConfigurationPhase.REGISTER_BEAN;
	}

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		Map<String, Object> attributes = Objects
			.requireNonNull(metadata.getAnnotationAttributes(ConditionalOnLeaderElectionBackend.class.getName()));
		LeaderElectionBackend backend = (LeaderElectionBackend) attributes.get("value");
		ConditionMessage.Builder message = ConditionMessage.forCondition(ConditionalOnLeaderElectionBackend.class,
				backend.propertyValue());
		BackendDetection detection = BackendDetection.standard();
		BackendDetection.Context detectionContext = new BackendDetection.Context(
				Objects.requireNonNull(context.getBeanFactory()), context.getEnvironment(), context.getClassLoader());
		LeaderElectionBackend configured = Binder.get(context.getEnvironment())
			.bind(BackendDetection.BACKEND_PROPERTY, LeaderElectionBackend.class)
			.orElse(null);
		if (configured != null) {
			String selection = BackendDetection.BACKEND_PROPERTY + " is '" + configured.propertyValue() + "'";
			if (configured != backend) {
				return ConditionOutcome.noMatch(message.because(selection));
			}
			if (!detection.fits(backend, detectionContext)) {
				return ConditionOutcome
					.noMatch(message.because(selection + " but the application lacks " + detection.evidence(backend)));
			}
			return ConditionOutcome.match(message.because(selection));
		}
		List<LeaderElectionBackend> fitting = detection.fitting(detectionContext);
		if (fitting.equals(List.of(backend))) {
			return ConditionOutcome.match(message.because("detected " + detection.evidence(backend)));
		}
		return ConditionOutcome.noMatch(message
			.because(BackendDetection.BACKEND_PROPERTY + " is not set and the detected backends are " + fitting));
	}

}
