package io.github.leaderelection;

import java.time.Duration;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Awaitility checks a condition at once and then every few milliseconds, rather than
 * first after 100 ms and then every 100 ms: the conditions of these tests are cheap
 * reads, and a test that waits on one would otherwise wait up to a poll interval past the
 * moment it holds, on every wait. Registered for every test class of the module
 * (junit-platform.properties, META-INF/services).
 */
public class QuickPolling implements BeforeAllCallback {

	private static final Duration INTERVAL = Duration.ofMillis(5);

	@Override
	public void beforeAll(ExtensionContext context) {
		Awaitility.setDefaultPollDelay(Duration.ZERO);
		Awaitility.setDefaultPollInterval(INTERVAL);
	}

}
