package io.bulkhead.spring

import io.bulkhead.BulkheadFullException
import io.bulkhead.BulkheadRegistry
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test
import org.springframework.boot.WebApplicationType
import org.springframework.boot.autoconfigure.AutoConfigurations
import org.springframework.boot.autoconfigure.ImportAutoConfiguration
import org.springframework.boot.builder.SpringApplicationBuilder
import org.springframework.boot.test.context.FilteredClassLoader
import org.springframework.boot.test.context.runner.ApplicationContextRunner
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration

/**
 * `@Bulkhead` on a Kotlin `suspend fun`: Spring AOP calls it as a `Mono` through
 * kotlinx-coroutines-reactor, so the slot is held while the coroutine is suspended and freed when
 * it completes or is cancelled, never at its first suspension. Without that module, start-up
 * refuses it.
 */
class SuspendFunctionTest {

  /** What the test holds the calls with; a bean of its own, as the service is proxied. */
  class Gate {
    @Volatile var entered = CompletableDeferred<Unit>()
    @Volatile var release = CompletableDeferred<String>()

    fun reset() {
      entered = CompletableDeferred()
      release = CompletableDeferred()
    }
  }

  open class Chat(private val gate: Gate) {
    @Bulkhead("llm")
    open suspend fun complete(prompt: String): String {
      gate.entered.complete(Unit)
      return gate.release.await() + " to " + prompt // suspends here, holding the slot
    }

    @Bulkhead(value = "llm", fallbackMethod = "cached")
    open suspend fun completeOrCached(prompt: String): String = complete(prompt)

    open suspend fun cached(prompt: String, refused: BulkheadFullException): String =
      "cached answer to $prompt (${refused.reason()})"
  }

  @Configuration(proxyBeanMethods = false)
  @ImportAutoConfiguration(
    BulkheadAutoConfiguration::class,
    BulkheadReactorAutoConfiguration::class,
  )
  open class App {
    @Bean open fun gate() = Gate()

    @Bean open fun chat(gate: Gate) = Chat(gate)
  }

  @Test
  fun aSuspendFunHoldsItsSlotUntilItsCoroutineCompletesOrIsCancelled() {
    SpringApplicationBuilder(App::class.java)
      .web(WebApplicationType.NONE)
      .properties("bulkhead.compartments.llm.limit=1")
      .run()
      .use { context ->
        val chat = context.getBean(Chat::class.java)
        val gate = context.getBean(Gate::class.java)
        val llm = context.getBean(BulkheadRegistry::class.java).bulkhead("llm").orElseThrow()

        runBlocking {
          withTimeout(30_000) {
            val first = async(Dispatchers.Default) { chat.complete("first") }
            gate.entered.await()
            // The coroutine is suspended on the gate: it has returned nothing yet, and holds the
            // slot.
            assertThat(llm.stats().inFlight()).isEqualTo(1)

            val refused = runCatching { chat.complete("second") }.exceptionOrNull()
            assertThat(refused).isInstanceOf(BulkheadFullException::class.java)
            assertThat(chat.completeOrCached("third"))
              .isEqualTo("cached answer to third (QUEUE_FULL)")
            assertThat(llm.stats().inFlight()).isEqualTo(1)

            gate.release.complete("answer")
            assertThat(first.await()).isEqualTo("answer to first")
            assertThat(llm.stats().inFlight()).isZero()

            // Cancelled while suspended: the slot comes back with the cancellation.
            gate.reset()
            val cancelled =
              async(Dispatchers.Default, start = CoroutineStart.DEFAULT) { chat.complete("gone") }
            gate.entered.await()
            assertThat(llm.stats().inFlight()).isEqualTo(1)
            cancelled.cancel()
            cancelled.join()
            assertThat(llm.stats().inFlight()).isZero()
            assertThat(llm.stats().admitted()).isEqualTo(2)
          }
        }
      }
  }

  @Test
  fun withoutKotlinxCoroutinesReactorASuspendFunIsRefusedAtStartUp() {
    ApplicationContextRunner()
      .withClassLoader(FilteredClassLoader("kotlinx.coroutines.reactor"))
      .withConfiguration(
        AutoConfigurations.of(
          BulkheadAutoConfiguration::class.java,
          BulkheadReactorAutoConfiguration::class.java,
        )
      )
      .withUserConfiguration(App::class.java)
      .withPropertyValues("bulkhead.compartments.llm.limit=1")
      .run { context ->
        assertThat(context)
          .getFailure()
          .rootCause()
          .hasMessageStartingWith("@Bulkhead(\"llm\") on " + Chat::class.java.name + ".complete")
          .hasMessageContaining(
            "(String, Continuation) cannot be applied: it is a suspend fun, which Spring AOP would" +
              " let return at its first suspension, freeing the slot while the coroutine still runs;" +
              " add org.jetbrains.kotlinx:kotlinx-coroutines-reactor"
          )
      }
  }
}
