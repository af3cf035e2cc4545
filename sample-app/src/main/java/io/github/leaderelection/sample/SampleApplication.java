package io.github.leaderelection.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * A scheduler master in the spirit of seed 003: every instance schedules the job, only
 * the leader runs it, and every run is a write fenced by the leader's term.
 */
@SpringBootApplication
@EnableScheduling
public class SampleApplication {

	public static void main(String[] args) {
		EmbeddedDatabaseShutdown.install(SpringApplication.run(SampleApplication.class, args));
	}

}
