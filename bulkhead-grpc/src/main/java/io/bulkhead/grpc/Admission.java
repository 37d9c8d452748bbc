package io.bulkhead.grpc;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/*
 * One delayed call's way through its compartment, for DelayedServerCall and DelayedClientCall.
 *
 * Algorithm
 * ---------
 * submit() calls bulkhead.submit with a task that starts the call and returns `slot`, a
 * CompletableFuture the call completes (release()) when it ends; the compartment frees the slot when
 * `slot` completes. Until the task runs, the call is a node in the compartment's queue and no thread
 * waits. The future submit returns is kept as `ticket`.
 *
 *   WAITING ──task runs──> ADMITTED
 *      ├──withdraw()──> WITHDRAWN   (cancelled while waiting: ticket.cancel, it leaves the queue)
 *      └──refusal─────> REFUSED     (the ticket failed with BulkheadFullException)
 *
 * Invariants
 *   A1 The call starts at most once, only in the task that moved WAITING -> ADMITTED; a withdrawn or
 *      refused call never starts.
 *   A2 `ticket` is cancelled only by the withdraw() that moved WAITING -> WITHDRAWN. Once admitted
 *      nobody cancels it, so the compartment never forwards a cancellation to `slot`: the slot is
 *      freed only by release().
 *   A3 The slot is freed exactly once: `slot` completes at most once (CompletableFuture), and the
 *      compartment frees a slot behind a CAS of its own when the stage completes.
 *   A4 Exactly one of "started", "withdrawn" and "refused" happens: each is the one CAS out of
 *      WAITING that won.
 *
 * Races, as interleavings
 *   R1 withdraw vs submit. T1 is inside bulkhead.submit (admitted inline, say) when T2 withdraws. T2
 *      CASes WAITING -> WITHDRAWN and then reads `ticket`; T1 writes `ticket` and then reads `state`.
 *      Both are volatile, so at least one of them cancels the ticket; a second cancel is a no-op.
 *   R2 withdraw vs admission. T1 withdraws while T2 (the compartment) hands over a slot. (a) T1's
 *      cancel removes the node first: the task never runs (counted as cancelled). (b) T2 granted the
 *      node but had not started it: the compartment sees the ticket cancelled and passes the slot on
 *      without running the task. (c) the task runs: one CAS wins. If T1's, the task returns a
 *      completed stage (the slot goes straight back) and the call never starts. If T2's, withdraw()
 *      returns false and the caller treats the cancellation as one after admission.
 *   R3 refusal vs withdraw: the WAIT_TIMEOUT refusal (a compartment thread) and withdraw() both CAS
 *      out of WAITING; the loser does nothing.
 * No lock: the call is started, and the refusal reported, with nothing held.
 */
/** A delayed call's admission: starts it once, withdraws it once, frees its slot once. */
final class Admission {

  private static final int WAITING = 0;
  private static final int ADMITTED = 1;
  private static final int WITHDRAWN = 2;
  private static final int REFUSED = 3;

  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(Admission.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final CompletableFuture<Void> slot = new CompletableFuture<>();
  private volatile int state = WAITING;
  private volatile CompletableFuture<Void> ticket;

  /**
   * Asks {@code bulkhead} for a slot: {@code start} runs once it is granted (on this thread if one
   * is free, else on one of the compartment's own threads); {@code refused} runs if the compartment
   * says no, unless the call was withdrawn first.
   */
  void submit(Bulkhead bulkhead, Runnable start, Consumer<BulkheadFullException> refused) {
    CompletableFuture<Void> submitted = bulkhead.submit(() -> admit(start));
    ticket = submitted;
    if (state == WITHDRAWN) {
      submitted.cancel(false); // withdrawn before `ticket` was set (R1)
    }
    submitted.whenComplete(
        (ignored, failure) -> {
          BulkheadFullException rejection = failure == null ? null : Refusal.find(failure);
          if (rejection != null && STATE.compareAndSet(this, WAITING, REFUSED)) {
            refused.accept(rejection);
          }
        });
  }

  private CompletionStage<Void> admit(Runnable start) {
    if (!STATE.compareAndSet(this, WAITING, ADMITTED)) {
      return CompletableFuture.completedFuture(null); // withdrawn during the hand-over (R2c)
    }
    start.run();
    return slot;
  }

  /**
   * Withdraws a waiting call from the queue; false if it was admitted (or refused) already, in
   * which case the cancellation is the call's own business.
   */
  boolean withdraw() {
    if (!STATE.compareAndSet(this, WAITING, WITHDRAWN)) {
      return false;
    }
    CompletableFuture<Void> submitted = ticket;
    if (submitted != null) {
      submitted.cancel(false); // null: submit() has not set it yet and cancels it itself (R1)
    }
    return true;
  }

  /** Whether the call is waiting or admitted: what it is told still matters. */
  boolean isLive() {
    int now = state;
    return now == WAITING || now == ADMITTED;
  }

  /** Frees the slot of an admitted call; later calls do nothing. */
  void release() {
    slot.complete(null);
  }

  /** Whether {@link #release()} has been called. */
  boolean isReleased() {
    return slot.isDone();
  }
}
