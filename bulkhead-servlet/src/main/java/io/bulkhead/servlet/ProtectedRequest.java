package io.bulkhead.servlet;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.edge.RejectionBody;
import io.bulkhead.edge.internal.Submission;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

/*
 * One request on its way through a compartment: waiting for a slot without a container thread, then
 * running the rest of the filter chain while it holds the slot.
 *
 * Algorithm
 * ---------
 * begin(), on the container's REQUEST dispatch, stores this object as a request attribute and hands it
 * to Bulkhead.submit as the supplier. When the compartment admits the request it calls get(), which
 * returns a view of `done`; the compartment holds the slot until `done` completes, and release() is
 * the only thing that completes it. Then one of three things has happened when submit returns:
 *   admitted at once  get() ran on this very thread (INLINE): the chain runs now, on this thread.
 *   refused at once   the future failed with BulkheadFullException: the 503 is written now.
 *   queued            begin() starts async (the container thread goes back to its pool), sets the async
 *                     timeout a little past the compartment's maxWait, listens to the AsyncContext, and
 *                     parks the request (PARKED). A later grant, on whichever thread freed the slot,
 *                     calls AsyncContext.dispatch(): the container runs the filter again on one of its
 *                     threads, the filter finds this object in the attribute (DISPATCHED) and runs the
 *                     chain (RUNNING). A later refusal, on the compartment's timer thread, writes the
 *                     503 on a container thread through AsyncContext.start and completes.
 * After the chain returns, or throws, the slot is released unless the application has started async
 * itself; then the AsyncListener releases it when that async ends (onComplete, onError, onTimeout), and
 * re-registers itself in onStartAsync so that an application that starts async again is followed too.
 * A request that ends without a slot (refused, abandoned) calls release() as well: release() means
 * "this request is over for the compartment", and removes it from the filter's `live` set, whose
 * members the filter's destroy() shuts down (R8).
 *
 * States (`state`, never back; moved by CAS, except INLINE->RUNNING, which only the thread that
 * ------   called submit makes, since nobody else acts on an INLINE request)
 *   SUBMITTING    --get() on the submitting thread-->   INLINE --> RUNNING
 *   SUBMITTING    --get() on another thread-->          GRANTED_EARLY --begin()--> DISPATCHED
 *   SUBMITTING    --refusal-->                          REJECTED (begin() writes the 503)
 *   SUBMITTING    --begin() after startAsync-->         PARKED
 *   PARKED        --get()-->                            DISPATCHED --filter again--> RUNNING
 *   PARKED        --refusal-->                          REJECTED (written via AsyncContext.start)
 *   PARKED        --onError/onTimeout/onComplete-->     ABANDONED (the queued call is cancelled)
 *   SUBMITTING    --onError/onTimeout/onComplete-->     ABANDONED (R6)
 *
 * Invariants
 * ----------
 *   I1 the chain runs at most once for this object, and only in INLINE/RUNNING, that is after get()
 *      won a CAS: a request that was refused or abandoned never reaches the servlet.
 *   I2 the slot is freed exactly once: the compartment frees it when the stage get() returned
 *      completes, and `done` completes once however many of release()'s callers (the chain's finally,
 *      onComplete, onError, onTimeout) arrive. A get() that loses to ABANDONED returns a completed
 *      stage, so a slot granted at that moment is freed at once.
 *   I3 exactly one party answers a refusal: whoever moves `state` to REJECTED (or begin() when it
 *      finds REJECTED after its own CAS failed).
 *
 * Races, as interleavings
 * -----------------------
 *   R1 admission vs park. T2 frees a slot and grants this request while T1 is between submit()
 *      returning and its CAS SUBMITTING->PARKED. T2's CAS SUBMITTING->GRANTED_EARLY wins, T1's fails;
 *      T1 has already started async, so T1 dispatches. Had T1 won, T2 would move PARKED->DISPATCHED
 *      and dispatch: the request is dispatched by exactly one of them.
 *   R2 admission vs client gone / async timeout. T1 (a granting thread) runs get(), T2 (a container
 *      thread) runs onError or onTimeout. Both CAS from PARKED. If T1 wins, the request is dispatched
 *      and T2 merely releases: the container ends the request and the slot is freed by it. If T2 wins,
 *      it cancels the queued call (counted as cancelled) and T1's get() returns a completed stage (I2).
 *   R3 refusal vs park. The compartment's timer refuses the request (maxWait) before T1 parks it: the
 *      refusal CASes SUBMITTING->REJECTED, T1's CAS fails and T1 writes the 503 and completes.
 *   R4 chain exception vs onComplete. The chain throws after the application started async on another
 *      thread that completes at once: the finally block and onComplete both call release(); I2 makes
 *      the second a no-op. If the application's complete() ran before the finally looked, the request
 *      is no longer async-started and the finally releases.
 *   R5 cancellation forwarded after admission. If the queued call is cancelled just after it was
 *      granted, the core forwards the cancellation to the stage get() returned. That stage is a minimal
 *      view of `done`, so cancelling it changes nothing: the slot is freed only by release().
 *   R6 listener vs park. The listener is registered before begin() CASes SUBMITTING->PARKED, so T2 (a
 *      container thread) may report an error or timeout in between. T2 abandons from SUBMITTING as
 *      from PARKED; T1's CAS then fails, finds neither GRANTED_EARLY nor REJECTED, and leaves the
 *      request to T2.
 *   R7 end vs dispatch. The container ends a request (onError, onComplete) after get() dispatched it
 *      but before the second pass runs: the listener releases the slot, and the second pass, finding
 *      the slot already freed, does not run the chain (I1 holds).
 *   R8 destroy vs everything. A container that stops may drop a dispatch it has accepted, or never
 *      report the end of an application's async, and then nothing above would free the slot. The
 *      filter's destroy() calls shutdown() on every live request: it abandons a waiting one (the
 *      same CASes as onError) and releases any other, so it is one more party to I2 and R2, not a new
 *      path. A request that submit() has not returned for yet is abandoned from SUBMITTING; begin()
 *      then finds ABANDONED and withdraws the call itself (Submission's race: one of the two does).
 */
final class ProtectedRequest extends Submission implements AsyncListener {

  /** The request attribute that carries this object from the first dispatch to the second. */
  static final String ATTRIBUTE = ProtectedRequest.class.getName();

  private static final System.Logger LOG = System.getLogger("io.bulkhead.servlet");

  /**
   * How long after the compartment's maxWait the container's async timeout fires for a waiting
   * request: long enough that the compartment's own 503 (with its Retry-After) always comes first,
   * so the async timeout only ever catches a request the compartment failed to answer.
   */
  private static final Duration ASYNC_TIMEOUT_MARGIN = Duration.ofSeconds(1);

  private static final int SUBMITTING = 0;
  private static final int INLINE = 1;
  private static final int GRANTED_EARLY = 2;
  private static final int PARKED = 3;
  private static final int DISPATCHED = 4;
  private static final int RUNNING = 5;
  private static final int REJECTED = 6;
  private static final int ABANDONED = 7;

  private static final CompletionStage<Void> NOTHING_TO_HOLD =
      CompletableFuture.completedStage(null);

  private final Bulkhead bulkhead;
  private final HttpServletRequest request;
  private final HttpServletResponse response;
  private final RejectionBody rejectionBody;
  private final Set<ProtectedRequest> live;

  private final AtomicInteger state = new AtomicInteger(SUBMITTING);
  private final CompletableFuture<Void> done = new CompletableFuture<>();
  private volatile AsyncContext async;
  private volatile BulkheadFullException refusal;

  ProtectedRequest(
      Bulkhead bulkhead,
      HttpServletRequest request,
      HttpServletResponse response,
      RejectionBody rejectionBody,
      Set<ProtectedRequest> live) {
    this.bulkhead = bulkhead;
    this.request = request;
    this.response = response;
    this.rejectionBody = rejectionBody;
    this.live = live;
  }

  /** First pass: asks for a slot, then runs the chain, answers 503, or parks the request. */
  void begin(FilterChain chain) throws IOException, ServletException {
    request.setAttribute(ATTRIBUTE, this);
    live.add(this);
    done.whenComplete((ignored, never) -> live.remove(this));
    CompletableFuture<Void> queued = submitTo(bulkhead);
    if (queued == null) {
      return; // R8: the filter was destroyed while submit() ran; the call is withdrawn
    }
    if (state.get() == INLINE) {
      state.set(RUNNING); // only this thread moves INLINE
      runChain(request, response, chain);
      return;
    }
    if (queued.isCompletedExceptionally()) {
      refusedLater(queued); // refused at once: REJECTED now, answered below by this thread
      try {
        if (state.get() == REJECTED) {
          Rejection.send(response, refusal, rejectionBody);
        }
      } finally {
        release();
      }
      return;
    }
    AsyncContext ctx;
    try {
      ctx = request.startAsync(request, response);
    } catch (IllegalStateException | UnsupportedOperationException cannotPark) {
      // Leave the queue, or give back a slot granted meanwhile (GRANTED_EARLY) that cannot be used.
      if (!abandon()) {
        release();
      }
      throw cannotPark;
    }
    bulkhead.config().maxWait().ifPresent(maxWait -> ctx.setTimeout(asyncTimeoutMillis(maxWait)));
    ctx.addListener(this);
    async = ctx;
    queued.whenComplete(
        (ignored, failure) -> {
          if (failure != null) {
            refusedLater(queued);
          }
        });
    if (state.compareAndSet(SUBMITTING, PARKED)) {
      return; // the container's thread goes back to its pool; get() or the listener takes it on
    }
    if (state.compareAndSet(GRANTED_EARLY, DISPATCHED)) { // R1
      dispatch(ctx);
    } else if (state.get() == REJECTED) { // R3
      answerRefusal(ctx);
    }
  }

  /**
   * Any later pass of the same request. On the ASYNC dispatch that get() asked for, the request
   * holds its slot and runs the chain; any other (the application's own dispatches, forwards, error
   * pages) passes untouched. {@code req} and {@code res} are this pass's, as the filters before may
   * have wrapped them anew.
   */
  void resume(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (state.compareAndSet(DISPATCHED, RUNNING)) {
      if (!done.isDone()) { // R7: not ended by the container between dispatch() and this pass
        runChain(req, res, chain);
      }
    } else {
      chain.doFilter(req, res);
    }
  }

  private void runChain(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    try {
      chain.doFilter(req, res);
    } finally {
      if (!request.isAsyncStarted()) {
        release();
      } else {
        followApplicationAsync();
      }
    }
  }

  /** The application started async: the slot is held until that async ends (R4). */
  private void followApplicationAsync() {
    AsyncContext ctx;
    try {
      ctx = request.getAsyncContext();
    } catch (IllegalStateException completedMeanwhile) {
      release();
      return;
    }
    if (async == null) { // admitted inline; a parked request's listener follows via onStartAsync
      try {
        ctx.addListener(this);
      } catch (IllegalStateException completedMeanwhile) {
        release();
      }
    }
  }

  @Override
  protected boolean abandoned() {
    return state.get() == ABANDONED;
  }

  /** The compartment granted a slot: run the chain while holding it. */
  @Override
  public CompletionStage<Void> get() {
    if (onSubmittingThread() && state.compareAndSet(SUBMITTING, INLINE)) {
      return done.minimalCompletionStage();
    }
    if (state.compareAndSet(SUBMITTING, GRANTED_EARLY)) {
      return done.minimalCompletionStage(); // R1: begin() dispatches once it has started async
    }
    if (state.compareAndSet(PARKED, DISPATCHED)) {
      dispatch(async);
      return done.minimalCompletionStage(); // R5
    }
    return NOTHING_TO_HOLD; // R2: abandoned a moment ago; the slot frees at once
  }

  private void dispatch(AsyncContext ctx) {
    try {
      ctx.dispatch();
    } catch (IllegalStateException ended) {
      // The container ended the request (client gone, shutting down) between our CAS and dispatch.
      release();
    }
  }

  /** The queued call failed: a refusal (QUEUE_FULL at once, or WAIT_TIMEOUT), or our own cancel. */
  private void refusedLater(CompletableFuture<Void> queued) {
    Throwable cause;
    try {
      queued.join();
      return;
    } catch (CompletionException e) {
      cause = e.getCause();
    } catch (CancellationException e) {
      return; // we withdrew it because the request was abandoned
    }
    if (!(cause instanceof BulkheadFullException)) {
      LOG.log(
          Level.WARNING, "the queued request in bulkhead '" + bulkhead.name() + "' failed", cause);
      return;
    }
    refusal = (BulkheadFullException) cause;
    if (state.compareAndSet(SUBMITTING, REJECTED)) {
      return; // begin() is still on the request's thread and answers (R3)
    }
    if (state.compareAndSet(PARKED, REJECTED)) {
      AsyncContext ctx = async;
      try {
        ctx.start(() -> answerRefusal(ctx)); // not on the compartment's timer thread
      } catch (RuntimeException stopping) {
        answerRefusal(ctx);
      }
    }
  }

  private void answerRefusal(AsyncContext ctx) {
    try {
      Rejection.send(response, refusal, rejectionBody);
    } catch (IOException | RuntimeException failure) {
      LOG.log(Level.DEBUG, "could not send the 503 of bulkhead '" + bulkhead.name() + "'", failure);
    } finally {
      release();
      complete(ctx);
    }
  }

  /**
   * While waiting: leave the queue; the listener's caller decides what the client gets. SUBMITTING
   * counts as waiting here because the listener is registered just before begin() parks (R6).
   */
  private boolean abandon() {
    if (!state.compareAndSet(PARKED, ABANDONED) && !state.compareAndSet(SUBMITTING, ABANDONED)) {
      return false;
    }
    withdraw(); // if submit() has not returned yet, begin() withdraws the call (R8)
    release();
    return true;
  }

  /** Frees the slot if this request holds one; every call after the first does nothing (I2). */
  private void release() {
    done.complete(null);
  }

  /** The filter is being destroyed: whatever this request is waiting for will not come (R8). */
  void shutdown() {
    if (abandon()) {
      AsyncContext ctx = async;
      if (ctx != null) {
        complete(ctx);
      }
    } else {
      release();
    }
  }

  @Override
  public void onComplete(AsyncEvent event) {
    abandon(); // completed by the container while still queued (shutting down)
    release();
  }

  @Override
  public void onTimeout(AsyncEvent event) throws IOException {
    if (!abandon()) {
      release();
      return;
    }
    // Only with an unbounded maxWait, or a timeout shortened by someone else: the compartment has
    // not refused the request, so there is no Retry-After to give, only the fact.
    try {
      if (!response.isCommitted()) {
        Rejection.sendWithoutHint(
            response,
            "bulkhead '"
                + bulkhead.name()
                + "': the request's async"
                + " timeout ran out while it waited for a slot\n");
      }
    } finally {
      complete(event.getAsyncContext());
    }
  }

  @Override
  public void onError(AsyncEvent event) {
    if (abandon()) {
      complete(event.getAsyncContext()); // the client has gone: nothing to answer
    } else {
      release();
    }
  }

  @Override
  public void onStartAsync(AsyncEvent event) {
    // The application started async again; the container has dropped its listeners, so follow it.
    event.getAsyncContext().addListener(this);
  }

  private void complete(AsyncContext ctx) {
    try {
      ctx.complete();
    } catch (IllegalStateException alreadyEnded) {
      // the container completed it itself
    }
  }

  private static long asyncTimeoutMillis(Duration maxWait) {
    try {
      return maxWait.plus(ASYNC_TIMEOUT_MARGIN).toMillis();
    } catch (ArithmeticException tooLong) {
      return 0; // a wait longer than a long's milliseconds: never time out, as the compartment does
    }
  }

  @Override
  public String toString() {
    return "ProtectedRequest[" + bulkhead.name() + " " + request.getRequestURI() + "]";
  }
}
