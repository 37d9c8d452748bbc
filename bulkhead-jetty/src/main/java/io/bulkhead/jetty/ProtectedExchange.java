package io.bulkhead.jetty;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import java.lang.System.Logger.Level;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/*
 * One request on its way through a compartment: waiting for a slot, then handled by the wrapped
 * handler while it holds the slot.
 *
 * Algorithm
 * ---------
 * begin() hands this object to Bulkhead.submit as the supplier. When the compartment admits the
 * request, get() runs the wrapped handler with `completion`, a Callback of ours, and returns `done`,
 * a future that completes when `completion` does. The compartment holds the slot until `done`
 * completes, so the slot is held exactly as long as the request is being handled, whether the handler
 * finishes on the admitting thread or answers later from another one. A request admitted at once runs
 * on the thread that called handle(); one admitted later runs on the context's executor, so the thread
 * that freed the slot (maybe completing an unrelated response) only hands it over. Likewise a refusal
 * after waiting, which the compartment reports on a thread of its own, is answered on that executor,
 * where Jetty writes every response.
 *
 * Two one-shot gates
 * ------------------
 *   `state`     leaves WAITING exactly once, by CAS: to RUNNING (admitted; the wrapped handler owns the
 *               Jetty callback), REJECTED (the compartment said no; we answer 503) or ABANDONED (the
 *               client left, or Jetty failed the request, while it waited).
 *   `finished`  the release-once path. Every end of the request — the handler's success or failure,
 *               a throw out of the handler, a 404 for an unhandled request, the 503, the abandonment —
 *               goes through finish(), whose CAS lets exactly one of them complete Jetty's callback,
 *               and which then completes `done`, freeing the slot if the request held one.
 *
 * Races, as interleavings
 * -----------------------
 *   R1 grant vs disconnect. T1 (the compartment) grants the slot and calls get(); T2 (a failure
 *      listener or the disconnect watcher) calls clientGone(). Both CAS `state` from WAITING. If T1
 *      wins, the handler runs and T2 does nothing: Jetty and the handler see the failure themselves. If
 *      T2 wins, it fails the callback and cancels the queued call; T1's get() then returns a completed
 *      stage, so a slot granted at that very moment is freed at once without running the handler.
 *   R2 disconnect before submit returns. T2 abandons the request before T1 has stored `admission`.
 *      T2 reads `admission` after its CAS, T1 reads `state` after storing `admission` (both volatile):
 *      at least one of them sees the other and cancels the queued call. Cancelling twice is harmless.
 *   R3 cancellation forwarded after admission. If the queued call is cancelled after it was granted,
 *      the core forwards the cancellation to the stage get() returned. That stage is a minimal view of
 *      `done`, so cancelling it changes nothing: the slot is freed only when the handler finishes,
 *      never while it still runs.
 *   R4 rejection vs disconnect. The 503 is written only by whoever moves `state` to REJECTED, so a
 *      request the client abandoned is never also answered.
 */
final class ProtectedExchange implements Supplier<CompletionStage<Void>> {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.jetty");

  private static final int WAITING = 0;
  private static final int RUNNING = 1;
  private static final int REJECTED = 2;
  private static final int ABANDONED = 3;

  private static final CompletionStage<Void> NOTHING_TO_HOLD = CompletableFuture.completedStage(null);

  private final Bulkhead bulkhead;
  private final Handler next;
  private final Request request;
  private final Response response;
  private final Callback callback;
  private final DisconnectWatcher watcher; // null when the handler was not started by a server
  private final RejectionBody rejectionBody;

  private final AtomicInteger state = new AtomicInteger(WAITING);
  private final AtomicBoolean finished = new AtomicBoolean();
  private final CompletableFuture<Void> done = new CompletableFuture<>();
  private final Callback completion = new Completion();
  private volatile CompletableFuture<Void> admission;
  private volatile DisconnectWatcher.Watch watch;
  private volatile Thread submitting;

  ProtectedExchange(Bulkhead bulkhead, Handler next, Request request, Response response,
      Callback callback, DisconnectWatcher watcher, RejectionBody rejectionBody) {
    this.bulkhead = bulkhead;
    this.next = next;
    this.request = request;
    this.response = response;
    this.callback = callback;
    this.watcher = watcher;
    this.rejectionBody = rejectionBody;
  }

  /** Asks the compartment for a slot; returns at once, whether the request runs, waits or is refused. */
  void begin() {
    request.addFailureListener(this::clientGone);
    submitting = Thread.currentThread();
    CompletableFuture<Void> queued;
    try {
      queued = bulkhead.submit(this);
    } finally {
      submitting = null;
    }
    admission = queued;
    if (state.get() == ABANDONED) {
      queued.cancel(false); // R2
      return;
    }
    if (queued.isDone()) {
      admissionEnded(queued); // refused at once, or already handled: on this Jetty thread
    } else {
      // A later refusal comes from one of the compartment's own threads: answer it on the server's
      // executor, like every response.
      queued.whenComplete((ignored, failure) -> {
        if (failure != null) {
          dispatch(() -> admissionEnded(queued));
        }
      });
    }
    if (watcher != null && state.get() == WAITING && !queued.isDone()) {
      DisconnectWatcher.Watch w = watcher.watch(request, () -> clientGone(null));
      watch = w;
      if (w != null && state.get() != WAITING) {
        w.cancel(); // admitted, refused or abandoned while the watch was being set up
      }
    }
  }

  /** The compartment granted a slot: run the wrapped handler while holding it. */
  @Override
  public CompletionStage<Void> get() {
    if (!state.compareAndSet(WAITING, RUNNING)) {
      return NOTHING_TO_HOLD; // R1: abandoned a moment ago; the slot frees at once
    }
    stopWatching();
    if (Thread.currentThread() == submitting) {
      runHandler();
    } else {
      try {
        request.getContext().execute(this::runHandler);
      } catch (RejectedExecutionException stopping) {
        completion.failed(stopping);
      }
    }
    return done.minimalCompletionStage(); // R3
  }

  private void runHandler() {
    try {
      if (!next.handle(request, response, completion)) {
        Response.writeError(request, response, completion, HttpStatus.NOT_FOUND_404);
      }
    } catch (Throwable failure) {
      completion.failed(failure);
    }
  }

  private void dispatch(Runnable task) {
    try {
      request.getContext().execute(task);
    } catch (RejectedExecutionException stopping) {
      task.run();
    }
  }

  private void admissionEnded(CompletableFuture<Void> queued) {
    if (!queued.isCompletedExceptionally()) {
      return; // admitted, handled, finished: finish() already answered
    }
    Throwable cause;
    try {
      queued.join();
      return;
    } catch (CompletionException e) {
      cause = e.getCause();
    } catch (CancellationException e) {
      return; // withdrawn because the request was abandoned: finish() has answered
    }
    if (cause instanceof BulkheadFullException && state.compareAndSet(WAITING, REJECTED)) {
      stopWatching();
      try {
        Rejection.send(response, completion, (BulkheadFullException) cause, rejectionBody);
      } catch (Throwable t) {
        completion.failed(t);
      }
    }
    // Otherwise the call was cancelled because the request was abandoned: finish() has answered.
  }

  /** The client went away, or Jetty failed the request; only a waiting request is affected. */
  private void clientGone(Throwable failure) {
    if (!state.compareAndSet(WAITING, ABANDONED)) {
      return; // R1: running (the handler sees the failure itself), refused or already abandoned
    }
    stopWatching();
    CompletableFuture<Void> queued = admission;
    if (queued != null) {
      queued.cancel(false); // leaves the queue; R2 covers a null here
    }
    completion.failed(failure != null ? failure : new EofException(
        "the client closed the connection while its request waited in bulkhead '"
            + bulkhead.name() + "'"));
  }

  private void stopWatching() {
    DisconnectWatcher.Watch w = watch;
    if (w != null) {
      w.cancel();
    }
  }

  /**
   * The release-once path: Jetty's callback is completed once, then the slot is freed. In that order
   * because freeing the slot may hand it to a waiter whose handler then starts on this thread; the
   * response that freed it should not wait for that.
   */
  private void finish(Throwable failure) {
    if (!finished.compareAndSet(false, true)) {
      return;
    }
    try {
      if (failure == null) {
        callback.succeeded();
      } else {
        callback.failed(failure);
      }
    } catch (Throwable t) {
      LOG.log(Level.WARNING, "Jetty's callback threw while completing a request in bulkhead '"
          + bulkhead.name() + "'", t);
    } finally {
      done.complete(null);
    }
  }

  /**
   * The callback the wrapped handler completes. It declares itself blocking (the default), so Jetty
   * never completes it on a selector thread: completing it frees a slot, and with it may hand the slot
   * to the next request.
   */
  private final class Completion implements Callback {
    @Override
    public void succeeded() {
      finish(null);
    }

    @Override
    public void failed(Throwable failure) {
      finish(failure);
    }
  }
}
