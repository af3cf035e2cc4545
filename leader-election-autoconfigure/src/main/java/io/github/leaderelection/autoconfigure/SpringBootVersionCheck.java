package io.github.leaderelection.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.SpringBootVersion;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.SpringVersion;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Fails startup with one clear message on a Spring Boot or Spring Framework older than
 * the starter is built for. Without it, Boot 3.x loads the auto-configurations and half
 * of them quietly do not match (Boot 4 moved the classes they look for), which reads as
 * misleading advice such as a missing JDBC starter, and health and metrics silently
 * absent.
 *
 * <p>
 * A registrar, so that it runs while the configuration classes are read, before any bean
 * of the starter is created and could fail with a message of its own.
 */
class SpringBootVersionCheck implements ImportBeanDefinitionRegistrar {

	static final int REQUIRED_BOOT_MAJOR = 4;

	static final int REQUIRED_FRAMEWORK_MAJOR = 7;

	@Override
	public void registerBeanDefinitions(AnnotationMetadata importingClassMetadata, BeanDefinitionRegistry registry) {
		check(SpringBootVersion.getVersion(), SpringVersion.getVersion());
	}

	/**
	 * Checks the versions; a version that cannot be read (classes outside a jar, as in an
	 * IDE or a shaded jar) passes.
	 * @param bootVersion Spring Boot's version, or {@code null}
	 * @param frameworkVersion Spring Framework's version, or {@code null}
	 */
	static void check(@Nullable String bootVersion, @Nullable String frameworkVersion) {
		if (major(bootVersion) < REQUIRED_BOOT_MAJOR || major(frameworkVersion) < REQUIRED_FRAMEWORK_MAJOR) {
			throw new LeaderElectionConfigurationException(
					"The leader election starter requires Spring Boot " + REQUIRED_BOOT_MAJOR
							+ ".x (with Spring Framework " + REQUIRED_FRAMEWORK_MAJOR
							+ ".x) and Java 17 or later, but this application runs Spring Boot " + bootVersion
							+ " with Spring Framework " + frameworkVersion + ".",
					"Upgrade the application to Spring Boot " + REQUIRED_BOOT_MAJOR
							+ ".x (tested with 4.1.0). There is no line of this starter for Spring Boot 3.x; "
							+ "until you upgrade, remove leader-election-spring-boot-starter.");
		}
	}

	private static int major(@Nullable String version) {
		if (version == null) {
			return Integer.MAX_VALUE;
		}
		int end = 0;
		while (end < version.length() && Character.isDigit(version.charAt(end))) {
			end++;
		}
		return (end == 0) ? Integer.MAX_VALUE : Integer.parseInt(version.substring(0, end));
	}

}
