package io.github.leaderelection.autoconfigure;

import java.lang.reflect.Proxy;
import java.util.Optional;

import io.github.leaderelection.LeaderElection;
import io.github.leaderelection.LeaderElectionRegistry;
import io.github.leaderelection.OnlyOnLeader;
import org.junit.jupiter.api.Test;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;
import org.springframework.context.annotation.ProxyType;
import org.springframework.context.annotation.Proxyable;

import static io.github.leaderelection.autoconfigure.LeaderElectionAutoConfigurationTests.analyze;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link OnlyOnLeaderBeans}: a method that {@code @OnlyOnLeader} applies to but
 * that the proxy cannot intercept fails startup, and whatever the proxy can gate is left
 * alone. Until the application is ready this instance leads no group, so a gated call
 * returns {@code null}.
 */
class OnlyOnLeaderBeansTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LeaderElectionAutoConfiguration.class,
				DisabledLeaderElectionAutoConfiguration.class))
		.withPropertyValues("leader-election.backend=in-memory");

	@Test
	void failsWithClearMessageWhenAnnotatedMethodIsFinal() {
		this.contextRunner.withBean("jobs", FinalMethod.class).run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).isEqualTo("@OnlyOnLeader cannot gate bean 'jobs' ("
					+ FinalMethod.class.getName() + "):\n    - " + FinalMethod.class.getName() + "#run(String, int) is "
					+ "final, so the class-based proxy cannot override it: it would run on every instance");
			assertThat(analysis.getAction()).isEqualTo("Remove final from " + FinalMethod.class.getName()
					+ "#run(String, int) (in Kotlin, declare " + "it open).");
		});
	}

	@Test
	void failsWithClearMessageWhenAnnotatedMethodIsPrivate() {
		this.contextRunner.withBean("jobs", PrivateMethod.class).run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).contains(PrivateMethod.class.getName() + "#run() is private, so no "
					+ "proxy can intercept it: it would run on every instance");
			assertThat(analysis.getAction()).isEqualTo("Make " + PrivateMethod.class.getName() + "#run() public.");
		});
	}

	@Test
	void failsWithClearMessageWhenAnnotatedMethodIsStatic() {
		this.contextRunner.withBean("jobs", StaticMethod.class).run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).contains(StaticMethod.class.getName() + "#run() is static, so no "
					+ "proxy can intercept it: it would run on every instance");
			assertThat(analysis.getAction())
				.isEqualTo("Make " + StaticMethod.class.getName() + "#run() an instance " + "method.");
		});
	}

	@Test
	void failsWithClearMessageWhenAnnotatedClassIsFinal() {
		this.contextRunner.withBean("jobs", FinalClass.class).run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).isEqualTo("@OnlyOnLeader cannot gate bean 'jobs' ("
					+ FinalClass.class.getName() + "):\n    - the class " + FinalClass.class.getName()
					+ " is final, so " + "no class-based proxy can be made for it");
			assertThat(analysis.getAction()).startsWith("Remove final from class " + FinalClass.class.getName())
				.contains("@Proxyable(ProxyType.INTERFACES)");
		});
	}

	@Test
	void failsWhenAnnotationOnClassAppliesToFinalMethod() {
		this.contextRunner.withBean("jobs", AnnotatedClassWithFinalMethod.class)
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains(AnnotatedClassWithFinalMethod.class.getName() + "#run() is final"));
	}

	@Test
	void failsWhenAnnotatedInterfaceMethodIsImplementedByFinalMethod() {
		this.contextRunner.withBean("jobs", FinalImplementationOfAnnotatedInterface.class)
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains(FinalImplementationOfAnnotatedInterface.class.getName() + "#run() is final"));
	}

	@Test
	void failsWhenInheritedAnnotatedMethodIsFinal() {
		this.contextRunner.withBean("jobs", InheritsFinalMethod.class)
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("bean 'jobs' (" + InheritsFinalMethod.class.getName() + ")")
				.contains(FinalMethod.class.getName() + "#run(String, int) is final"));
	}

	@Test
	void listsEveryMethodThatCannotBeGated() {
		this.contextRunner.withBean("jobs", SeveralProblems.class).run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).contains("#finalRun() is final", "#privateRun() is private",
					"#staticRun() is static");
			assertThat(analysis.getAction().lines()).hasSize(3);
		});
	}

	@Test
	void failsWhenClassWithoutInterfacesIsProxiedByClassAlthoughInterfaceProxiesArePreferred() {
		this.contextRunner.withPropertyValues("spring.aop.proxy-target-class=false")
			.withBean("jobs", FinalMethod.class)
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains(FinalMethod.class.getName() + "#run(String, int) is final"));
	}

	@Test
	void failsAtStartupForLazyBeansToo() {
		this.contextRunner.withUserConfiguration(LazyConfiguration.class)
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains(FinalMethod.class.getName() + "#run(String, int) is final"));
	}

	@Test
	void failsWhenLeaderElectionIsDisabledToo() {
		this.contextRunner.withPropertyValues("leader-election.enabled=false")
			.withBean("jobs", FinalMethod.class)
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains(FinalMethod.class.getName() + "#run(String, int) is final"));
	}

	@Test
	void failsWithClearMessageWhenAnnotationNamesBlankGroup() {
		this.contextRunner.withBean("jobs", BlankGroup.class).run((context) -> {
			FailureAnalysis analysis = analyze(context);
			assertThat(analysis.getDescription()).isEqualTo("Invalid group ' ' in @OnlyOnLeader on "
					+ BlankGroup.class.getName() + "#run(): group must not be blank");
			assertThat(analysis.getAction())
				.startsWith("Set the group of @OnlyOnLeader on " + BlankGroup.class.getName() + "#run() to a name");
		});
	}

	@Test
	void failsWithClearMessageWhenAnnotationNamesBlankGroupAndLeaderElectionIsDisabled() {
		this.contextRunner.withPropertyValues("leader-election.enabled=false")
			.withBean("jobs", BlankGroup.class)
			.run((context) -> assertThat(analyze(context).getDescription()).isEqualTo("Invalid group ' ' in "
					+ "@OnlyOnLeader on " + BlankGroup.class.getName() + "#run(): group must not be blank"));
	}

	@Test
	void gatesPackagePrivateAndProtectedMethodsOfClassProxies() {
		this.contextRunner.withBean("jobs", NonPublicMethods.class).run((context) -> {
			assertThat(context).hasNotFailed();
			NonPublicMethods jobs = context.getBean(NonPublicMethods.class);
			assertThat(AopUtils.isCglibProxy(jobs)).isTrue();
			assertThat(jobs.packagePrivate()).isNull();
			assertThat(jobs.protectedRun()).isEmpty();
			assertThat(jobs.ungated()).isEqualTo("ran");
		});
	}

	@Test
	void gatesFinalClassProxiedThroughItsInterfaces() {
		this.contextRunner.withPropertyValues("spring.aop.proxy-target-class=false")
			.withBean("jobs", Job.class, FinalJob::new)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				Job job = context.getBean(Job.class);
				assertThat(AopUtils.isJdkDynamicProxy(job)).isTrue();
				assertThat(job.run()).isNull();
			});
	}

	@Test
	void gatesFinalClassOfBeanThatAsksForInterfaceProxy() {
		this.contextRunner.withUserConfiguration(ProxyableConfiguration.class).run((context) -> {
			assertThat(context).hasNotFailed();
			Job job = context.getBean(Job.class);
			assertThat(AopUtils.isJdkDynamicProxy(job)).isTrue();
			assertThat(job.run()).isNull();
		});
	}

	@Test
	void gatesAnnotatedImplementationMethodThroughInterfaceProxy() {
		this.contextRunner.withPropertyValues("spring.aop.proxy-target-class=false")
			.withBean("jobs", Job.class, AnnotatedImplementation::new)
			.run((context) -> {
				Job job = context.getBean(Job.class);
				assertThat(AopUtils.isJdkDynamicProxy(job)).isTrue();
				assertThat(job.run()).isNull();
			});
	}

	@Test
	void gatesBeansThatAreJdkProxiesOrLambdas() {
		this.contextRunner.withUserConfiguration(ProxyAndLambdaConfiguration.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean("proxy", AnnotatedJob.class).run()).isNull();
			assertThat(context.getBean("lambda", AnnotatedJob.class).run()).isNull();
		});
	}

	@Test
	void gatesMethodsOfConfigurationClasses() {
		this.contextRunner.withUserConfiguration(JobsConfiguration.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(JobsConfiguration.class).run()).isNull();
		});
	}

	@Test
	void leavesStaticMethodsOfAnnotatedClassAlone() {
		this.contextRunner.withBean("jobs", AnnotatedClassWithStaticMethod.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(AnnotatedClassWithStaticMethod.class).run()).isNull();
			assertThat(AnnotatedClassWithStaticMethod.create()).isNotNull();
		});
	}

	@Test
	void joinsGroupsNamedInAnnotationsOfLazyBeansAtStartup() {
		this.contextRunner.withUserConfiguration(LazyGroupConfiguration.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(LeaderElectionRegistry.class).elections()).extracting(LeaderElection::group)
				.contains("lazy-group");
		});
	}

	public static class FinalMethod {

		@OnlyOnLeader
		public final String run(String name, int count) {
			return name + count;
		}

	}

	public static class InheritsFinalMethod extends FinalMethod {

	}

	public static class PrivateMethod {

		public String callsRun() {
			return run();
		}

		@OnlyOnLeader
		private String run() {
			return "ran";
		}

	}

	public static class StaticMethod {

		@OnlyOnLeader
		public static String run() {
			return "ran";
		}

	}

	public static final class FinalClass {

		@OnlyOnLeader
		public String run() {
			return "ran";
		}

	}

	@OnlyOnLeader
	public static class AnnotatedClassWithFinalMethod {

		public final String run() {
			return "ran";
		}

	}

	@OnlyOnLeader
	public static class AnnotatedClassWithStaticMethod {

		public static AnnotatedClassWithStaticMethod create() {
			return new AnnotatedClassWithStaticMethod();
		}

		public String run() {
			return "ran";
		}

	}

	public interface AnnotatedJob {

		@OnlyOnLeader
		String run();

	}

	public static class FinalImplementationOfAnnotatedInterface implements AnnotatedJob {

		@Override
		public final String run() {
			return "ran";
		}

	}

	public static class SeveralProblems {

		@OnlyOnLeader
		public final String finalRun() {
			return "ran";
		}

		@OnlyOnLeader
		private String privateRun() {
			return "ran";
		}

		@OnlyOnLeader
		public static String staticRun() {
			return "ran";
		}

		String callsPrivateRun() {
			return privateRun();
		}

	}

	public static class NonPublicMethods {

		@OnlyOnLeader
		String packagePrivate() {
			return "ran";
		}

		@OnlyOnLeader
		protected Optional<String> protectedRun() {
			return Optional.of("ran");
		}

		public String ungated() {
			return "ran";
		}

	}

	public interface Job {

		String run();

	}

	public static final class FinalJob implements Job {

		@Override
		@OnlyOnLeader
		public final String run() {
			return "ran";
		}

	}

	public static class AnnotatedImplementation implements Job {

		@Override
		@OnlyOnLeader
		public String run() {
			return "ran";
		}

	}

	public static class BlankGroup {

		@OnlyOnLeader(group = " ")
		public void run() {
		}

	}

	public static class LazyGroup {

		@OnlyOnLeader(group = "lazy-group")
		public void run() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class LazyConfiguration {

		@Bean
		@Lazy
		FinalMethod jobs() {
			return new FinalMethod();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class LazyGroupConfiguration {

		@Bean
		@Lazy
		LazyGroup lazyGroup() {
			return new LazyGroup();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ProxyAndLambdaConfiguration {

		@Bean
		AnnotatedJob proxy() {
			return (AnnotatedJob) Proxy.newProxyInstance(getClass().getClassLoader(),
					new Class<?>[] { AnnotatedJob.class }, (proxy, method, arguments) -> "ran");
		}

		@Bean
		AnnotatedJob lambda() {
			return () -> "ran";
		}

	}

	@Configuration
	static class JobsConfiguration {

		@OnlyOnLeader
		public String run() {
			return "ran";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ProxyableConfiguration {

		@Bean
		@Proxyable(ProxyType.INTERFACES)
		FinalJob jobs() {
			return new FinalJob();
		}

	}

}
