package io.github.leaderelection.aop

import io.github.leaderelection.LeaderElection
import io.github.leaderelection.Leadership
import io.github.leaderelection.LeadershipContext
import io.github.leaderelection.OnlyOnLeader
import io.github.leaderelection.engine.LeaderElectionEngine
import io.github.leaderelection.memory.InMemoryLeaseStore
import io.github.leaderelection.spi.Lease
import java.time.Duration
import java.util.Optional
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference
import kotlin.coroutines.coroutineContext
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.cancel
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flowOf
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.future.asCompletableFuture
import kotlinx.coroutines.reactor.ReactorContext
import kotlinx.coroutines.runBlocking
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.springframework.aop.framework.ProxyFactory

/**
 * Kotlin `suspend` leader-only methods: gated when their work runs, like reactive ones,
 * and tracked until it ends, after any suspension.
 */
class SuspendingOnlyOnLeaderTests {

	private val store = InMemoryLeaseStore()

	private val engine = LeaderElectionEngine.builder(store)
		.candidateId("node-1")
		.shutdownTimeout(Duration.ofSeconds(20))
		.build()

	private val interceptor = OnlyOnLeaderInterceptor({ engine }, { "default" }, { Duration.ofSeconds(20) })

	private val target = SuspendingJobs()

	private val jobs = proxy(target)

	private val scope = CoroutineScope(Dispatchers.Default)

	@AfterEach
	fun close() {
		target.mayEnd.complete(Unit)
		scope.cancel()
		engine.close()
	}

	@Test
	fun runsOnTheLeaderAndIsNotCalledOnAFollower(): Unit = runBlocking {
		assertThat(jobs.value()).isNull()
		assertThat(jobs.nothing()).isEqualTo(Unit)
		assertThat(target.calls.get()).isZero()
		startLeading()
		assertThat(jobs.value()).isEqualTo("ran")
		jobs.nothing()
		assertThat(target.calls.get()).isEqualTo(2)
	}

	@Test
	fun aMethodThatReturnsAFlowIsGatedWhenItsCoroutineRuns(): Unit = runBlocking {
		assertThat(jobs.numbers().toList()).isEmpty()
		assertThat(target.calls.get()).isZero()
		startLeading()
		assertThat(jobs.numbers().toList()).containsExactly(1, 2, 3)
		assertThat(target.calls.get()).isOne()
	}

	@Test
	fun theWorkFindsItsLeadershipInItsReactorContextAfterASuspension(): Unit = runBlocking {
		startLeading()
		val leadership = jobs.leadershipAfterDelay()
		assertThat(leadership).isNotNull()
		assertThat(leadership!!.group()).isEqualTo("default")
		assertThat(leadership.term()).isEqualTo(1)
		// The coroutine starts when its publisher is subscribed to, after the gate's
		// thread-bound scope closed: the Reactor context is where it looks.
		assertThat(target.leadershipContextAtStart.get()).isEmpty()
	}

	@Test
	fun shutdownWaitsForTheWorkAfterItsFirstSuspensionBeforeReleasingTheLease() {
		val election = startLeading()
		val work = scope.async { jobs.untilAllowed() }.asCompletableFuture()
		runBlocking { target.started.await() }
		val closing = CompletableFuture.runAsync(engine::close)
		await().atMost(WAIT).until { !election.isLeader }
		Thread.sleep(200)
		assertThat(closing).isNotDone()
		assertThat(holder()).contains("node-1")
		target.mayEnd.complete(Unit)
		assertThat(work.get(20, TimeUnit.SECONDS)).isEqualTo("done")
		closing.get(20, TimeUnit.SECONDS)
		assertThat(holder()).isEmpty()
	}

	@Test
	fun aRevocationCancelsTheWorkOfAMethodThatAsksForInterruption() {
		val election = startLeading()
		val work = scope.async { jobs.endless() }.asCompletableFuture()
		await().atMost(WAIT).until { target.ticks.get() > 0 }
		election.yieldLeadership()
		await().atMost(WAIT).until { target.cancelled.get() }
		assertThat(work.get(20, TimeUnit.SECONDS)).`as`("what the caller got").isNull()
	}

	private fun startLeading(): LeaderElection {
		val election = engine.join("default")
		engine.addListener(interceptor)
		engine.start()
		await().atMost(WAIT).until { election.isLeader }
		return election
	}

	private fun holder(): Optional<String> = store.read("default", Duration.ofSeconds(1)).map(Lease::holder)

	private fun proxy(target: SuspendingJobs): SuspendingJobs {
		val factory = ProxyFactory(target)
		factory.isProxyTargetClass = true
		factory.addAdvisor(OnlyOnLeaderAdvisor(interceptor))
		return factory.proxy as SuspendingJobs
	}

	open class SuspendingJobs {

		val calls = AtomicInteger()

		val ticks = AtomicInteger()

		val cancelled = AtomicBoolean()

		val started = CompletableDeferred<Unit>()

		val mayEnd = CompletableDeferred<Unit>()

		val leadershipContextAtStart = AtomicReference<Optional<Leadership>>()

		@OnlyOnLeader
		open suspend fun value(): String? {
			calls.incrementAndGet()
			delay(1)
			return "ran"
		}

		@OnlyOnLeader
		open suspend fun nothing() {
			calls.incrementAndGet()
			delay(1)
		}

		@OnlyOnLeader
		open suspend fun numbers(): Flow<Int> {
			calls.incrementAndGet()
			delay(1)
			return flowOf(1, 2, 3)
		}

		@OnlyOnLeader
		open suspend fun leadershipAfterDelay(): Leadership? {
			leadershipContextAtStart.set(LeadershipContext.current())
			delay(10)
			return coroutineContext[ReactorContext]?.context?.getOrEmpty<Leadership>(Leadership::class.java)?.orElse(null)
		}

		@OnlyOnLeader
		open suspend fun untilAllowed(): String {
			started.complete(Unit)
			mayEnd.await()
			delay(10)
			return "done"
		}

		@OnlyOnLeader(interruptOnRevoke = true)
		open suspend fun endless(): String? {
			try {
				while (true) {
					delay(20)
					ticks.incrementAndGet()
				}
			}
			finally {
				cancelled.set(true)
			}
		}

	}

	companion object {

		private val WAIT: Duration = Duration.ofSeconds(20)

	}

}
