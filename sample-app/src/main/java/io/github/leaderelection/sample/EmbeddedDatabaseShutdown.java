package io.github.leaderelection.sample;

import java.util.List;

import org.springframework.context.ConfigurableApplicationContext;

import sun.misc.Signal;

/**
 * Closes the application context on SIGTERM and Ctrl-C before the JVM's shutdown hooks
 * run.
 *
 * <p>
 * Only the sample needs this, because of its embedded H2 database: in {@code AUTO_SERVER}
 * mode H2 closes the database from a JVM shutdown hook of its own (and refuses
 * {@code DB_CLOSE_ON_EXIT=FALSE}). That hook runs at the same time as Spring's, so the
 * lease release could find the database already closed, and the next leader would wait
 * for the lease to run out instead of taking over at its next attempt. With a database
 * server, or Redis or ZooKeeper, Spring's own shutdown hook is enough.
 */
final class EmbeddedDatabaseShutdown {

	private EmbeddedDatabaseShutdown() {
	}

	static void install(ConfigurableApplicationContext context) {
		for (String name : List.of("TERM", "INT")) {
			Signal.handle(new Signal(name), (signal) -> new Thread(() -> {
				context.close();
				System.exit(128 + signal.getNumber());
			}, "sample-shutdown").start());
		}
	}

}
