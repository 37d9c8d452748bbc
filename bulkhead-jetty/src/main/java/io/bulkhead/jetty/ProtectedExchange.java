package io.bulkhead.jetty;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.edge.RejectionBody;
import io.bulkhead.edge.internal.Submission;
import java.lang.System.Logger.Level;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
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
 * finishes on the admitting thread or answers later from another one. A request already answered when
 * the handler returns (on the thread that submitted it) returns a completed future instead, which the
 * compartment takes as done without registering a callback on it. A request admitted at once runs
 * on the thread that called handle(); one admitted later runs on the context's executor, so the thread
 * that freed the slot (maybe completing an unrelated response) only hands it over. Likewise a refusal
 * after waiting, which the compartment reports on a thread of its own, is answered on that executor,
 * where Jetty writes every response. The refusal is read with whenComplete, never join(): join()
 * would wrap it in a new CompletionException and fill in that exception's stack trace (all of Jetty's
 * frames) for every 503, on the path that must stay cheapest when the server is overloaded.
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
 *   R2 disconnect before submit returns. T2 abandons the request (its CAS to ABANDONED) before T1's
 *      submit() has returned: T2's withdraw() and T1's submitTo() each withdraw the queued call if they
 *      see the other's write (Submission's race), so at least one does.
 *   R3 cancellation forwarded after admission. If the queued call is cancelled after it was granted,
 *      the core forwards the cancellation to the stage get() returned. That stage is a minimal view of
 *      `done`, or, for a request answered before get() returned, a shared future completed already;
 *      cancelling either changes nothing: the slot is freed only when the handler finishes, never
 *      while it still runs.
 *   R4 rejection vs disconnect. The 503 is written only by whoever moves `state` to REJECTED, so a
 *      request the client abandoned is never also answered.
 *   R5 watch set up vs the request's end. T1 (begin) stores `watch`, then reads `state` and `finished`;
 *      T2 (finish, or a state change) sets them, then cancels `watch`. Like R2, at least one sees the
 *      other, so a watch never outlives the request it watches.
 *   R6 a running request without a body. Jetty reads nothing from the connection while such a request
 *      is handled (there is nothing to read), so the watch stays on after admission: a client that
 *      leaves is seen, and clientGone closes the connection and tells the failure listeners the
 *      handler added to its request (a WatchedRequest: Jetty does not call them when it closes a
 *      connection with no I/O pending). They can stop their work (the demo app cancels its upstream
 *      call), and the slot is freed when the handler completes the callback, through finish() as
 *      always. finish() cancels the watch before completing Jetty's callback, and a cancelled watch
 *      never fires (DisconnectWatcher W1), so the bytes of the next request on the connection, which
 *      Jetty reads only after that callback, are never taken for a disconnect. A request with a body
 *      stops being watched when admitted: its handler may read the socket, and the watcher, judging by
 *      the bytes left unread, could take a read for a disconnect.
 */
final class ProtectedExchange extends Submission {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.jetty");

  private static final int WAITING = 0;
  private static final int RUNNING = 1;
  private static final int REJECTED = 2;
  private static final int ABANDONED = 3;

  private static final CompletionStage<Void> NOTHING_TO_HOLD =
      CompletableFuture.completedStage(null);
  // Exactly a CompletableFuture, completed: the compartment frees the slot on the spot, where a
  // minimal stage of `done` cost it a callback (two stages and a lambda) per request answered at
  // once.
  // Shared, and safe to hand out: cancelling or completing a completed future changes nothing.
  private static final CompletableFuture<Void> ANSWERED = CompletableFuture.completedFuture(null);

  private final Bulkhead bulkhead;
  private final Handler next;
  private final Request request;
  private final Response response;
  private final Callback callback;
  private final DisconnectWatcher watcher; // null when the handler was not started by a server
  private final RejectionBody rejectionBody;
  private final boolean watchWhileRunning;
  private final Request handled; // what the wrapped handler gets

  private final AtomicInteger state = new AtomicInteger(WAITING);
  private final AtomicBoolean finished = new AtomicBoolean();
  private final CompletableFuture<Void> done = new CompletableFuture<>();
  private final Callback completion = new Completion();
  private volatile DisconnectWatcher.Watch watch;

  ProtectedExchange(
      Bulkhead bulkhead,
      Handler next,
      Request request,
      Response response,
      Callback callback,
      DisconnectWatcher watcher,
      RejectionBody rejectionBody) {
    this.bulkhead = bulkhead;
    this.next = next;
    this.request = request;
    this.response = response;
    this.callback = callback;
    this.watcher = watcher;
    this.rejectionBody = rejectionBody;
    this.watchWhileRunning = hasNoBody(request);
    this.handled = watchWhileRunning ? new WatchedRequest(request) : request;
  }

  private static boolean hasNoBody(Request request) {
    HttpFields headers = request.getHeaders();
    return !headers.contains(HttpHeader.TRANSFER_ENCODING)
        && headers.getLongField(HttpHeader.CONTENT_LENGTH) <= 0;
  }

  /**
   * Asks the compartment for a slot; returns at once, whether the request runs, waits or is
   * refused.
   */
  void begin() {
    request.addFailureListener(this::clientGone);
    CompletableFuture<Void> queued = submitTo(bulkhead);
    if (queued == null) {
      return; // R2: abandoned while submit() ran, and withdrawn
    }
    // The failure is taken from whenComplete, never from join(): join() wraps it in a new
    // CompletionException, whose stack trace (the whole Jetty stack) cost more than the rest of a
    // 503.
    if (queued.isDone()) {
      if (queued.isCompletedExceptionally()) {
        // Refused at once: whenComplete on a completed future runs here, on this Jetty thread.
        queued.whenComplete((ignored, failure) -> admissionFailed(failure));
      }
    } else {
      // A later refusal comes from one of the compartment's own threads: answer it on the server's
      // executor, like every response.
      queued.whenComplete(
          (ignored, failure) -> {
            if (failure != null) {
              dispatch(() -> admissionFailed(failure));
            }
          });
    }
    if (watcher != null && !queued.isDone() && isWatched()) {
      DisconnectWatcher.Watch w = watcher.watch(request, () -> clientGone(null));
      watch = w;
      if (w != null && !isWatched()) {
        w.cancel(); // refused, abandoned or finished while the watch was being set up (R5)
      }
    }
  }

  /** Waiting, or running with no request body for the handler to read (R6). */
  private boolean isWatched() {
    int s = state.get();
    return s == WAITING || (s == RUNNING && watchWhileRunning && !finished.get());
  }

  @Override
  protected boolean abandoned() {
    return state.get() == ABANDONED;
  }

  /** The compartment granted a slot: run the wrapped handler while holding it. */
  @Override
  public CompletionStage<Void> get() {
    if (!state.compareAndSet(WAITING, RUNNING)) {
      return NOTHING_TO_HOLD; // R1: abandoned a moment ago; the slot frees at once
    }
    if (!watchWhileRunning) {
      stopWatching(); // the handler may read the body: the watcher's verdict would be unsound (R6)
    }
    if (onSubmittingThread()) {
      runHandler();
      if (done.isDone()) {
        return ANSWERED; // R3: answered before get() returned, nothing left to hold
      }
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
      if (!next.handle(handled, response, completion)) {
        Response.writeError(handled, response, completion, HttpStatus.NOT_FOUND_404);
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

  /**
   * The queued call ended with {@code failure}: a refusal is answered with a 503. A cancellation
   * (the request was abandoned, and finish() has answered) or anything else is left alone.
   */
  private void admissionFailed(Throwable failure) {
    Throwable cause =
        failure instanceof CompletionException && failure.getCause() != null
            ? failure.getCause()
            : failure;
    if (cause instanceof BulkheadFullException && state.compareAndSet(WAITING, REJECTED)) {
      stopWatching();
      try {
        Rejection.send(response, completion, (BulkheadFullException) cause, rejectionBody);
      } catch (Throwable t) {
        completion.failed(t);
      }
    }
  }

  /**
   * The client went away ({@code failure} null: the watcher saw its connection end), or Jetty
   * failed the request. A waiting request leaves the queue; for a running one whose client the
   * watcher saw leave, the connection is closed and the handler's failure listeners are told.
   */
  private void clientGone(Throwable failure) {
    if (!state.compareAndSet(WAITING, ABANDONED)) {
      if (failure == null && state.get() == RUNNING && !finished.get()) {
        // R6: nobody reads this connection while the handler works, so Jetty would not notice.
        EofException left =
            new EofException(
                "the client closed the connection while its request"
                    + " held a slot of bulkhead '"
                    + bulkhead.name()
                    + "'");
        request.getConnectionMetaData().getConnection().getEndPoint().close(left);
        if (handled instanceof WatchedRequest watched) {
          watched.clientLeft(left);
        }
      }
      return; // R1: running (the handler sees the failure itself), refused or already abandoned
    }
    stopWatching();
    withdraw(); // leaves the queue (R2 when submit() has not returned yet)
    completion.failed(
        failure != null
            ? failure
            : new EofException(
                "the client closed the connection while its request waited in bulkhead '"
                    + bulkhead.name()
                    + "'"));
  }

  private void stopWatching() {
    DisconnectWatcher.Watch w = watch;
    if (w != null) {
      w.cancel();
    }
  }

  /**
   * The release-once path: Jetty's callback is completed once, then the slot is freed. In that
   * order because freeing the slot may hand it to a waiter whose handler then starts on this
   * thread; the response that freed it should not wait for that.
   */
  private void finish(Throwable failure) {
    if (!finished.compareAndSet(false, true)) {
      return;
    }
    stopWatching(); // before Jetty reads this connection again (R6)
    try {
      if (failure == null) {
        callback.succeeded();
      } else {
        callback.failed(failure);
      }
    } catch (Throwable t) {
      LOG.log(
          Level.WARNING,
          "Jetty's callback threw while completing a request in bulkhead '" + bulkhead.name() + "'",
          t);
    } finally {
      done.complete(null);
    }
  }

  /**
   * The request as the wrapped handler sees it when it has no body (R6). Closing a connection does
   * not make Jetty 12 call the failure listeners of a request that waits for no I/O, so a
   * disconnect the watcher saw is told to them here. Each listener hears one failure, this one or
   * Jetty's.
   */
  private static final class WatchedRequest extends Request.Wrapper {
    private final Queue<Consumer<Throwable>> listeners = new ConcurrentLinkedQueue<>();
    private volatile Throwable left;

    WatchedRequest(Request request) {
      super(request);
    }

    @Override
    public void addFailureListener(Consumer<Throwable> listener) {
      AtomicBoolean heard = new AtomicBoolean();
      Consumer<Throwable> once =
          failure -> {
            if (heard.compareAndSet(false, true)) {
              listener.accept(failure);
            }
          };
      listeners.add(once);
      super.addFailureListener(once);
      Throwable gone = left;
      if (gone != null) {
        once.accept(gone); // added while or after clientLeft ran: `once` keeps it to one call
      }
    }

    void clientLeft(Throwable failure) {
      left = failure;
      for (Consumer<Throwable> listener : listeners) {
        try {
          listener.accept(failure);
        } catch (RuntimeException e) {
          ProtectedExchange.LOG.log(Level.WARNING, "a failure listener threw", e);
        }
      }
    }
  }

  /**
   * The callback the wrapped handler completes. It declares itself blocking (the default), so Jetty
   * never completes it on a selector thread: completing it frees a slot, and with it may hand the
   * slot to the next request.
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
