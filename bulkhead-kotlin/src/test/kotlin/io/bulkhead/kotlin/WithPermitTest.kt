package io.bulkhead.kotlin

import io.bulkhead.Bulkhead
import io.bulkhead.BulkheadFullException
import java.time.Duration
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.currentTime
import kotlinx.coroutines.test.runCurrent
import kotlinx.coroutines.test.runTest
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test

/**
 * withPermit and Flow.withPermit on kotlinx-coroutines-test's single-threaded scheduler with
 * virtual time: a withPermit that blocked its thread while it waits would stop the whole test, so
 * every test here that queues also proves that waiting suspends.
 */
@OptIn(ExperimentalCoroutinesApi::class)
class WithPermitTest {

  private fun compartment(limit: Int, maxQueue: Int, maxWait: Duration = Duration.ofMinutes(5)) =
    Bulkhead.builder("llm").limit(limit).maxQueue(maxQueue).maxWait(maxWait).build()

  @Test
  fun queuedCoroutinesRunOneAtATimeInArrivalOrderWithoutBlockingTheThread() = runTest {
    val llm = compartment(limit = 1, maxQueue = 100)
    val order = mutableListOf<Int>()
    var running = 0
    var maxRunning = 0
    val jobs =
      (1..50).map { i ->
        launch {
          llm.withPermit {
            running++
            maxRunning = maxOf(maxRunning, running)
            order += i
            delay(10) // virtual time, holding the slot
            running--
          }
        }
      }
    jobs.forEach { it.join() }

    assertThat(order).isEqualTo((1..50).toList())
    assertThat(maxRunning).isEqualTo(1)
    assertThat(currentTime).isEqualTo(500) // 50 holders of 10 ms each, one after the other
    assertThat(llm.stats().inFlight()).isZero()
    assertThat(llm.stats().admitted()).isEqualTo(50)
  }

  @Test
  fun aCoroutineCancelledWhileQueuedLeavesTheQueueAndNeverTakesASlot() = runTest {
    val llm = compartment(limit = 1, maxQueue = 10)
    val release = CompletableDeferred<Unit>()
    val holder = launch { llm.withPermit { release.await() } }
    runCurrent()
    var ran = false
    val waiter = launch { llm.withPermit { ran = true } }
    runCurrent()
    assertThat(llm.stats().waiting()).isEqualTo(1)

    waiter.cancel()
    waiter.join()

    assertThat(llm.stats().waiting()).isZero()
    assertThat(llm.stats().cancelled()).isEqualTo(1)
    release.complete(Unit)
    holder.join()
    assertThat(ran).isFalse()
    assertThat(llm.stats().inFlight()).isZero()
    assertThat(llm.stats().admitted()).isEqualTo(1)
    // The slot is free: a new caller gets it at once.
    assertThat(llm.withPermit { "next" }).isEqualTo("next")
  }

  @Test
  fun theSlotIsFreedWhenTheBlockThrowsOrIsCancelled() = runTest {
    val llm = compartment(limit = 1, maxQueue = 0)
    val thrown = runCatching { llm.withPermit { error("boom") } }.exceptionOrNull()
    assertThat(thrown).isInstanceOf(IllegalStateException::class.java).hasMessage("boom")
    assertThat(llm.stats().inFlight()).isZero()

    val running = launch { llm.withPermit { delay(1_000) } }
    runCurrent()
    assertThat(llm.stats().inFlight()).isEqualTo(1)
    running.cancel()
    running.join()
    assertThat(llm.stats().inFlight()).isZero()
    assertThat(llm.stats().completed()).isEqualTo(2)
  }

  @Test
  fun aCallThatCannotQueueIsRefusedWithTheTypedException() = runTest {
    val llm = compartment(limit = 1, maxQueue = 0, maxWait = Duration.ofSeconds(1))
    val release = CompletableDeferred<Unit>()
    val holder = launch { llm.withPermit { release.await() } }
    runCurrent()

    val refused = runCatching { llm.withPermit { "never" } }.exceptionOrNull()

    println("[kotlin refusal] ${refused!!::class.qualifiedName}: ${refused.message}")
    assertThat(refused).isInstanceOf(BulkheadFullException::class.java)
    refused as BulkheadFullException
    assertThat(refused.bulkheadName()).isEqualTo("llm")
    assertThat(refused.reason()).isEqualTo(BulkheadFullException.Reason.QUEUE_FULL)
    assertThat(refused.retryAfter().isNegative).isFalse()
    release.complete(Unit)
    holder.join()
  }

  @Test
  fun aCallThatWaitsTooLongIsRefusedWithWaitTimeout() = runTest {
    // maxWait is the compartment's real clock: the test waits for it, suspended.
    val llm = compartment(limit = 1, maxQueue = 1, maxWait = Duration.ofMillis(20))
    val release = CompletableDeferred<Unit>()
    val holder = launch { llm.withPermit { release.await() } }
    runCurrent()

    val refused = runCatching { llm.withPermit { "never" } }.exceptionOrNull()

    assertThat(refused).isInstanceOf(BulkheadFullException::class.java)
    assertThat((refused as BulkheadFullException).reason())
      .isEqualTo(BulkheadFullException.Reason.WAIT_TIMEOUT)
    release.complete(Unit)
    holder.join()
    assertThat(llm.stats().inFlight()).isZero()
  }

  @Test
  fun aFlowHoldsTheSlotForItsWholeCollection() = runTest {
    val llm = compartment(limit = 1, maxQueue = 10)
    val tokens = flow {
      repeat(3) {
        delay(100)
        emit(it)
      }
    }
    val first = async { tokens.withPermit(llm).toList() }
    val second = async { tokens.withPermit(llm).toList() }
    runCurrent()
    assertThat(llm.stats().inFlight()).isEqualTo(1)
    assertThat(llm.stats().waiting()).isEqualTo(1)

    assertThat(first.await()).containsExactly(0, 1, 2)
    assertThat(second.await()).containsExactly(0, 1, 2)
    assertThat(currentTime).isEqualTo(600) // the second collection started after the first ended
    // A collector that stops early (take) frees the slot too.
    assertThat(tokens.withPermit(llm).take(1).toList()).containsExactly(0)
    assertThat(llm.stats().inFlight()).isZero()
    assertThat(llm.stats().completed()).isEqualTo(3)
  }
}
