package io.github.leaderelection.benchmarks;

import java.util.ArrayList;
import java.util.List;

/**
 * The {@code bench.*} system properties of the coordinator (store addresses, some set at
 * run time), passed on to every JVM it starts.
 */
final class Coordinates {

	private Coordinates() {
	}

	static void set(String name, String value) {
		System.setProperty(name, value);
	}

	static List<String> systemProperties() {
		List<String> options = new ArrayList<>();
		for (String name : System.getProperties().stringPropertyNames()) {
			if (name.startsWith("bench.")) {
				options.add("-D" + name + "=" + System.getProperty(name));
			}
		}
		return options;
	}

}
