package io.github.leaderelection.testing;

import java.time.Duration;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Publishes the {@link ApplicationReadyEvent} that {@code SpringApplication} would, for
 * contexts made by an {@code ApplicationContextRunner}: the election starts on it.
 */
public final class ApplicationReady {

	private ApplicationReady() {
	}

	public static void publish(AssertableApplicationContext context) {
		ConfigurableApplicationContext source = context.getSourceApplicationContext();
		source.publishEvent(new ApplicationReadyEvent(new SpringApplication(), new String[0], source, Duration.ZERO));
	}

}
