package io.github.leaderelection.autoconfigure;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.origin.Origin;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.util.ClassUtils;

/**
 * Reports a leader election configuration that cannot work: the property, its value and
 * the fix. Covers the checks made at startup and values of {@code leader-election.*}
 * properties that cannot even be bound, such as an unknown backend.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
class LeaderElectionFailureAnalyzer implements FailureAnalyzer {

	private static final String PREFIX = "leader-election.";

	@Override
	public @Nullable FailureAnalysis analyze(Throwable failure) {
		LeaderElectionConfigurationException configuration = findCause(failure,
				LeaderElectionConfigurationException.class);
		if (configuration != null) {
			return new FailureAnalysis(String.valueOf(configuration.getMessage()), configuration.action(),
					configuration);
		}
		BindException bind = findCause(failure, BindException.class);
		if (bind != null && bind.getProperty() != null && bind.getName().toString().startsWith(PREFIX)) {
			return analyzeBindFailure(bind, bind.getProperty());
		}
		return null;
	}

	private FailureAnalysis analyzeBindFailure(BindException failure, ConfigurationProperty property) {
		String name = property.getName().toString();
		Object value = property.getValue();
		Origin origin = property.getOrigin();
		Class<?> type = failure.getTarget().getType().resolve();
		String reason = (type != null && type.isEnum()) ? "not one of the accepted values"
				: rootCause(failure).getMessage();
		String description = "Invalid value '" + value + "' for " + name
				+ ((origin != null) ? " (from " + origin + ")" : "") + ": " + reason;
		return new FailureAnalysis(description, action(name, type), failure);
	}

	private static String action(String name, @Nullable Class<?> type) {
		if (type == LeaderElectionBackend.class) {
			return "Set " + name + " to a backend on the class path ("
					+ BackendDetection.standard().onClassPath(ClassUtils.getDefaultClassLoader())
					+ "), or remove it to detect the backend from the application's beans.";
		}
		if (type != null && type.isEnum()) {
			return "Set " + name + " to one of: "
					+ Arrays.stream(type.getEnumConstants())
						.map((constant) -> ((Enum<?>) constant).name().toLowerCase(Locale.ROOT).replace('_', '-'))
						.collect(Collectors.joining(", "))
					+ ".";
		}
		if (type == Duration.class) {
			return "Set " + name + " to a duration such as 15s, 500ms or PT15S.";
		}
		if (type == boolean.class || type == Boolean.class) {
			return "Set " + name + " to true or false.";
		}
		return "Update " + name + " in the application's configuration.";
	}

	private static Throwable rootCause(Throwable failure) {
		Throwable cause = failure;
		while (cause.getCause() != null && cause.getCause() != cause) {
			cause = cause.getCause();
		}
		return cause;
	}

	private static <E extends Throwable> @Nullable E findCause(Throwable failure, Class<E> type) {
		Throwable cause = failure;
		while (cause != null) {
			if (type.isInstance(cause)) {
				return type.cast(cause);
			}
			cause = cause.getCause();
		}
		return null;
	}

}
