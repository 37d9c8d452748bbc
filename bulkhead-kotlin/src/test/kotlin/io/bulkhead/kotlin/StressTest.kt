package io.bulkhead.kotlin

import io.bulkhead.Bulkhead
import io.bulkhead.BulkheadFullException
import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger
import kotlin.random.Random
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.delay
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test

/**
 * 10,000 coroutines on Dispatchers.Default (real threads) through one compartment, a random quarter
 * of them cancelled at a random moment (before they start, queued, being admitted, or running).
 * Every coroutine ends in exactly one of: its block ran (admitted), it was refused, or it was
 * cancelled before its block ran; the block never runs more than `limit` at once; nothing is left
 * in flight or queued.
 */
class StressTest {

  @Test
  fun tenThousandCoroutinesWithCancellationsAddUpExactly(): Unit = runBlocking {
    val total = 10_000
    val limit = 8
    val llm =
      Bulkhead.builder("stress").limit(limit).maxQueue(500).maxWait(Duration.ofSeconds(1)).build()
    val admitted = AtomicInteger()
    val refused = AtomicInteger()
    val cancelled = AtomicInteger()
    val inBlock = AtomicInteger()
    val maxInBlock = AtomicInteger()
    val random = Random(42)

    val jobs = ArrayList<Job>(total)
    repeat(total) { i ->
      val holdMillis = random.nextLong(0, 2)
      jobs +=
        // ATOMIC: even a coroutine cancelled before it was dispatched runs and calls withPermit,
        // so that every one of them is counted.
        launch(Dispatchers.Default, start = CoroutineStart.ATOMIC) {
          var entered = false
          try {
            llm.withPermit {
              entered = true
              admitted.incrementAndGet()
              val now = inBlock.incrementAndGet()
              maxInBlock.accumulateAndGet(now) { a, b -> maxOf(a, b) }
              try {
                if (holdMillis == 0L) yield() else delay(holdMillis)
              } finally {
                inBlock.decrementAndGet()
              }
            }
          } catch (e: BulkheadFullException) {
            refused.incrementAndGet()
          } catch (e: CancellationException) {
            if (!entered) cancelled.incrementAndGet()
            throw e
          }
        }
      if (i % 100 == 99) {
        delay(1) // in bursts of 100, so that the dispatcher is not one queue of 10,000 starts
      }
      if (i % 4 == 3) {
        val victim = jobs[random.nextInt(jobs.size)]
        launch(Dispatchers.Default) {
          repeat(random.nextInt(3)) { yield() }
          victim.cancel()
        }
      }
    }
    jobs.joinAll()
    // A slot handed to a waiter that was cancelled at that moment is passed on by the compartment's
    // own thread, after the waiter's coroutine has ended: wait for the compartment to settle (a
    // slot
    // that leaked never would, and the test fails here).
    withTimeout(60_000) {
      while (llm.stats().inFlight() != 0 || llm.stats().waiting() != 0) {
        delay(1)
      }
    }

    val stats = llm.stats()
    println(
      "[kotlin stress] coroutines $total: block ran ${admitted.get()}, refused ${refused.get()}," +
        " cancelled before the block ${cancelled.get()}; sum ${admitted.get() + refused.get() + cancelled.get()};" +
        " max in block ${maxInBlock.get()} (limit $limit); compartment: admitted ${stats.admitted()}," +
        " completed ${stats.completed()}, rejected ${stats.rejected()}, withdrawn ${stats.cancelled()}," +
        " in flight ${stats.inFlight()}, waiting ${stats.waiting()}"
    )
    assertThat(admitted.get() + refused.get() + cancelled.get()).isEqualTo(total)
    assertThat(maxInBlock.get()).isLessThanOrEqualTo(limit)
    assertThat(inBlock.get()).isZero()
    assertThat(stats.inFlight()).isZero()
    assertThat(stats.waiting()).isZero()
    assertThat(stats.admitted()).isEqualTo(stats.completed())
    // A coroutine refused as it was cancelled ends with CancellationException, as coroutines must.
    assertThat(stats.rejected()).isGreaterThanOrEqualTo(refused.get().toLong())
    // Every coroutine reached the compartment once: admitted, rejected, or withdrawn while queued.
    assertThat(stats.admitted() + stats.rejected() + stats.cancelled()).isEqualTo(total.toLong())
    // Admitted by the compartment but cancelled before the block ran (R2) gave its slot straight
    // back.
    assertThat(stats.admitted()).isGreaterThanOrEqualTo(admitted.get().toLong())
    assertThat(cancelled.get()).isPositive()
  }
}
