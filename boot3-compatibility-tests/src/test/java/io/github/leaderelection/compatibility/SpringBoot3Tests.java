package io.github.leaderelection.compatibility;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A Spring Boot 3.5 application with the starter and the JDBC starter: startup fails with
 * the starter's message about the versions, and with nothing misleading (such as a JDBC
 * starter said to be missing).
 */
@ExtendWith(OutputCaptureExtension.class)
class SpringBoot3Tests {

	@Test
	void runsOnSpringBoot3() {
		assertThat(SpringBootVersion.getVersion()).startsWith("3.");
	}

	@Test
	void failsStartupWithOneClearMessageAboutTheVersions(CapturedOutput output) {
		Path database = Path.of("target", "boot3-db").toAbsolutePath();
		SpringApplication application = new SpringApplication(Boot3Application.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		assertThatException().isThrownBy(() -> application.run("--spring.application.name=boot3",
				"--spring.datasource.url=jdbc:h2:file:" + database + ";AUTO_SERVER=TRUE"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("The leader election starter requires Spring Boot 4.x (with Spring Framework 7.x) and Java 17 "
					+ "or later, but this application runs Spring Boot " + SpringBootVersion.getVersion())
			.contains("Upgrade the application to Spring Boot 4.x")
			.doesNotContain("spring-boot-starter-jdbc")
			.doesNotContain("No leader election backend");
	}

	@SpringBootApplication
	static class Boot3Application {

	}

}
