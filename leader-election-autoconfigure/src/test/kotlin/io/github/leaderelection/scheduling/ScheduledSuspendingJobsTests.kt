package io.github.leaderelection.scheduling

import io.github.leaderelection.Leadership
import io.github.leaderelection.OnlyOnLeader
import io.github.leaderelection.RunOutcome
import io.github.leaderelection.autoconfigure.LeaderElectionAutoConfiguration
import io.github.leaderelection.memory.InMemoryLeaseStore
import io.github.leaderelection.testing.ApplicationReady
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.coroutineContext
import kotlinx.coroutines.delay
import kotlinx.coroutines.reactor.ReactorContext
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.Test
import org.springframework.boot.autoconfigure.AutoConfigurations
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration
import org.springframework.boot.test.context.runner.ApplicationContextRunner
import org.springframework.context.annotation.Configuration
import org.springframework.scheduling.annotation.EnableScheduling
import org.springframework.scheduling.annotation.Scheduled

/**
 * A scheduled Kotlin `suspend` leader-only method: Spring subscribes at each trigger, the
 * gate claims the tick there, and the run is recorded when the coroutine completes.
 */
class ScheduledSuspendingJobsTests {

	private val store = InMemoryLeaseStore()

	private val runs = Runs()

	@Test
	fun aSuspendingMethodRunsOnTheLeaderAndItsRunIsRecordedWhenItCompletes() {
		// Another instance leads the second group throughout.
		store.tryAcquire(OTHER_GROUP, "other", Duration.ofHours(1), Duration.ofSeconds(1))
		ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(LeaderElectionAutoConfiguration::class.java,
							TaskSchedulingAutoConfiguration::class.java))
			.withUserConfiguration(Scheduling::class.java)
			.withBean("suspendingEverySecond", SuspendingEverySecond::class.java, { SuspendingEverySecond(runs) })
			.withBean(InMemoryLeaseStore::class.java, { store })
			.withPropertyValues("leader-election.group=$GROUP", "leader-election.lease-duration=3s",
					"leader-election.renew-deadline=2s", "leader-election.retry-period=500ms",
					"spring.task.scheduling.pool.size=2")
			.run { context ->
				ApplicationReady.publish(context)
				val jobs = context.getBean(ScheduledJobs::class.java).jobs()
				assertThat(jobs.map { it.job().name() })
					.containsExactlyInAnyOrder("suspendingEverySecond.tick", "suspendingEverySecond.elsewhere")
				val job = jobs.first { it.job().group() == GROUP }
				await().atMost(WAIT).until { job.stats().runs(RunOutcome.SUCCEEDED) >= 2 }
				val run = job.job().lastRun().orElseThrow()
				assertThat(run.outcome()).isEqualTo(RunOutcome.SUCCEEDED)
				assertThat(Duration.between(run.started(), run.ended()))
					.`as`("recorded once the coroutine resumed after its delay")
					.isGreaterThanOrEqualTo(Duration.ofMillis(50))
				assertThat(runs.ended.get()).isGreaterThanOrEqualTo(2)
				assertThat(runs.groups).`as`("the leadership each run found in its context").containsOnly(GROUP)
				assertThat(runs.elsewhere.get()).`as`("calls on the follower").isZero()
			}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	open class Scheduling

	/** What the methods saw, kept apart from the bean: a proxy has no state of its own. */
	class Runs {

		val ended = AtomicInteger()

		val elsewhere = AtomicInteger()

		val groups: MutableSet<String> = ConcurrentHashMap.newKeySet()

	}

	open class SuspendingEverySecond(private val runs: Runs) {

		@OnlyOnLeader
		@Scheduled(cron = "* * * * * *")
		open suspend fun tick() {
			delay(50)
			coroutineContext[ReactorContext]?.context?.getOrEmpty<Leadership>(Leadership::class.java)
				?.ifPresent { runs.groups.add(it.group()) }
			runs.ended.incrementAndGet()
		}

		@OnlyOnLeader(group = OTHER_GROUP)
		@Scheduled(cron = "* * * * * *")
		open suspend fun elsewhere() {
			runs.elsewhere.incrementAndGet()
		}

	}

	companion object {

		private const val GROUP = "reports"

		private const val OTHER_GROUP = "audits"

		private val WAIT: Duration = Duration.ofSeconds(30)

	}

}
