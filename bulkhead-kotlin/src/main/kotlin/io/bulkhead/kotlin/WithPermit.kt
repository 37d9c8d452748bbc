package io.bulkhead.kotlin

import io.bulkhead.Bulkhead
import io.bulkhead.BulkheadFullException
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionException
import java.util.concurrent.CompletionStage
import java.util.concurrent.atomic.AtomicInteger
import java.util.function.Supplier
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException
import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.emitAll
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.suspendCancellableCoroutine

/*
 * Algorithm
 * ---------
 * withPermit asks the compartment through Bulkhead.submit, whose task is Admission.admit and whose
 * stage is `slot`, a CompletableFuture completed when the block ends; the compartment frees the slot
 * when `slot` completes. The coroutine suspends in suspendCancellableCoroutine until admit() resumes
 * it (admitted) or the ticket fails (refused). While it waits, the call is a node in the compartment's
 * queue and no thread is held. admit() runs on the caller's thread when a slot is free (the coroutine
 * then goes on without suspending), otherwise on one of the compartment's own threads, and resume()
 * dispatches the rest of the coroutine to its own dispatcher.
 *
 *   WAITING ──admit()──> ADMITTED
 *      ├──cancellation──> WITHDRAWN   (ticket.cancel: leaves the queue)
 *      └──refusal───────> REFUSED     (the coroutine resumes with BulkheadFullException)
 *
 * Invariants
 *   K1 The block runs at most once, only after the CAS WAITING -> ADMITTED.
 *   K2 The ticket is cancelled only by the cancellation that moved WAITING -> WITHDRAWN, so the
 *      compartment never forwards a cancellation to `slot`; the slot is freed exactly once, by the
 *      first completion of `slot` (the compartment frees behind a CAS of its own).
 *   K3 Every way out after ADMITTED completes `slot`: the block returns or throws (finally), or the
 *      coroutine was cancelled at the moment it was admitted (R2).
 *
 * Races, as interleavings
 *   R1 cancellation vs admission. T1 cancels the coroutine while T2 (the compartment) hands it a
 *      slot. One CAS out of WAITING wins. If T1's, the ticket is cancelled: the compartment withdraws
 *      the node, or, if T2 already runs admit(), admit() finds WITHDRAWN and returns a completed stage,
 *      so the slot goes straight back. If T2's, T1's CAS fails and the ticket is left alone (K2).
 *   R2 admitted and cancelled at once. T2's CAS won and it resumes the continuation, but T1 had
 *      cancelled the coroutine: suspendCancellableCoroutine then throws CancellationException
 *      (prompt cancellation) and the block never runs; the catch sees ADMITTED and completes `slot`.
 *   R3 refusal vs cancellation: the WAIT_TIMEOUT refusal and the cancellation both CAS out of
 *      WAITING; the loser does nothing, so the coroutine is resumed at most once.
 * No lock: the block and the continuation always run with nothing held.
 */

private const val WAITING = 0
private const val ADMITTED = 1
private const val WITHDRAWN = 2
private const val REFUSED = 3

/**
 * Runs [block] while holding one of this compartment's slots, suspending while it waits for one.
 *
 * ```
 * val llm = Bulkhead.builder("llm").limit(10).maxQueue(20).maxWait(Duration.ofSeconds(1)).build()
 * val answer = llm.withPermit { client.complete(prompt) }
 * ```
 *
 * When every slot is taken, the coroutine waits in the compartment's queue without blocking a
 * thread, for at most `maxWait`. Cancelling it while it waits withdraws it from the queue; it never
 * takes a slot afterwards. The slot is freed when [block] returns, throws or is cancelled.
 *
 * A call that had to wait is handed its slot on one of the compartment's own threads and resumes on
 * its own dispatcher, so [block] runs where the caller would have run it.
 *
 * @throws BulkheadFullException if the call was not admitted ([BulkheadFullException.reason] says
 *   why, [BulkheadFullException.retryAfter] when to try again); [block] was not run
 */
public suspend fun <T> Bulkhead.withPermit(block: suspend () -> T): T {
  val admission = Admission()
  try {
    suspendCancellableCoroutine<Unit> { continuation ->
      admission.continuation = continuation
      continuation.invokeOnCancellation {
        if (admission.state.compareAndSet(WAITING, WITHDRAWN)) {
          admission.ticket?.cancel(false) // null: not submitted yet, the check below cancels it
        }
      }
      val ticket = submit(admission)
      admission.ticket = ticket
      if (admission.state.get() == WITHDRAWN) {
        ticket.cancel(false) // cancelled while submit() ran, before `ticket` was set
      }
      ticket.whenComplete { _, failure ->
        if (failure != null && admission.state.compareAndSet(WAITING, REFUSED)) {
          continuation.resumeWithException(unwrap(failure))
        }
      }
    }
  } catch (failure: Throwable) {
    if (admission.state.get() == ADMITTED) {
      admission.slot.complete(null) // admitted as the coroutine was cancelled (R2)
    }
    throw failure
  }
  try {
    return block()
  } finally {
    admission.slot.complete(null)
  }
}

/**
 * Collects this flow while holding one of [bulkhead]'s slots, for the whole collection.
 *
 * ```
 * client.streamTokens(prompt).withPermit(llm).collect { send(it) }
 * ```
 *
 * Each collection waits for a slot as [Bulkhead.withPermit] does, without blocking a thread, and
 * holds it until the upstream completes, fails, or the collector stops (cancellation, `take`, an
 * exception). A collection that is not admitted fails with [BulkheadFullException] before the
 * upstream is collected.
 */
public fun <T> Flow<T>.withPermit(bulkhead: Bulkhead): Flow<T> = flow {
  bulkhead.withPermit { emitAll(this@withPermit) }
}

private fun unwrap(failure: Throwable): Throwable =
  if (failure is CompletionException && failure.cause != null) failure.cause!! else failure

/**
 * One withPermit call: the compartment's task, the slot's stage and who won the race out of
 * WAITING.
 */
private class Admission : Supplier<CompletionStage<Void?>> {
  val state = AtomicInteger(WAITING)
  val slot = CompletableFuture<Void?>()
  @Volatile var continuation: CancellableContinuation<Unit>? = null
  @Volatile var ticket: CompletableFuture<Void?>? = null

  override fun get(): CompletionStage<Void?> {
    if (!state.compareAndSet(WAITING, ADMITTED)) {
      return CompletableFuture.completedFuture(null) // withdrawn during the hand-over (R1)
    }
    continuation!!.resume(Unit)
    return slot
  }
}
