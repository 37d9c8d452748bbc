package io.bulkhead.grpc;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.grpc.Context;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/*
 * One server call through BulkheadServerInterceptor: the listener gRPC delivers to, and the task the
 * compartment admits.
 *
 * Algorithm
 * ---------
 * start() calls bulkhead.submit(this::admit) and keeps the future as `ticket`. Until admit() runs,
 * the call is a node in the compartment's queue and no thread waits; the handler has not been
 * started, and every listener callback gRPC delivers meanwhile is kept in `callbacks` (a SerialRunner
 * not yet open). admit() starts the handler (next.startCall) with a call whose close() completes
 * `slot`, then opens `callbacks`, which replays what was kept, in order, and passes later callbacks
 * through, one at a time. The compartment frees the slot when `slot` completes: at the handler's
 * close(), or when onComplete or onCancel has been delivered to the handler, whichever is first.
 *
 *   WAITING ──admit()──> ADMITTED
 *      ├──onCancel──> WITHDRAWN     (deadline passed, client gone: leaves the queue)
 *      └──refusal───> REFUSED       (closed UNAVAILABLE with grpc-retry-pushback-ms)
 *
 * Invariants
 * ----------
 *   G1 The handler is started at most once, only by the admit() that moved WAITING -> ADMITTED; a
 *      withdrawn or refused call never reaches it, and its kept callbacks are never delivered.
 *   G2 `ticket` is cancelled only by the onCancel that moved WAITING -> WITHDRAWN. Once admitted,
 *      nobody cancels it, so the compartment never forwards a cancellation to `slot`: the slot is
 *      freed by this class only, when the call ends.
 *   G3 The slot is freed exactly once: `slot` completes at most once (CompletableFuture), and the
 *      compartment frees a slot behind a CAS of its own when the stage completes. Every way an
 *      admitted call ends completes `slot`: close(), onComplete, onCancel, a handler that throws.
 *   G4 Only one thread closes the ServerCall: before admission that is the refusal (nothing else
 *      touches the call: callbacks are only kept); after it, the handler.
 *
 * Races, as interleavings
 * -----------------------
 *   C1 onCancel vs submit. gRPC delivers no callback before interceptCall returns this listener, but
 *      start() may still be inside submit() (admitted inline) when a transport thread cancels: T2
 *      CASes WAITING -> WITHDRAWN and reads `ticket`, T1 writes `ticket` and reads `state`; both
 *      volatile, so one of them cancels the ticket (a second cancel is a no-op).
 *   C2 onCancel vs admission. T1 (transport) cancels while T2 (the compartment) hands over a slot.
 *      (a) T1 withdraws the node first: admit() never runs, counted as cancelled. (b) T2 granted the
 *      node but T1's ticket.cancel came before the start: the compartment passes the slot on without
 *      running admit(). (c) admit() runs: one CAS on `state` wins. If T1's, admit() returns a
 *      completed stage (the slot goes straight back) and never starts the handler. If T2's, T1's CAS
 *      fails and onCancel is queued like any callback: the handler sees it after its start, and the
 *      slot is freed when it has been delivered.
 *   C3 close vs onCancel vs onComplete after admission: each completes `slot`; the first wins, the
 *      others are no-ops (G3).
 *   C4 refusal vs onCancel. The WAIT_TIMEOUT refusal (compartment thread) and onCancel (transport)
 *      both CAS out of WAITING; the loser does nothing, so the call is closed at most once (G4).
 *
 * Threads: admit() runs on the transport's thread when a slot is free and on one of the
 * compartment's own threads when the call waited; the handler's start and the replayed callbacks run
 * there, inside the call's gRPC Context (deadline, cancellation). Later callbacks run on gRPC's
 * thread, or on whichever thread is replaying at that moment, never two at once.
 */
/** A server call delayed until its compartment admits it; see the algorithm above. */
final class DelayedServerCall<ReqT, RespT> extends ServerCall.Listener<ReqT> {

  private static final int WAITING = 0;
  private static final int ADMITTED = 1;
  private static final int WITHDRAWN = 2;
  private static final int REFUSED = 3;

  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(DelayedServerCall.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final ServerCall<ReqT, RespT> call;
  private final Metadata headers;
  private final ServerCallHandler<ReqT, RespT> next;
  private final Bulkhead bulkhead;
  private final Context context;
  // Completed when the admitted call ends; the compartment then frees the slot (G3).
  private final CompletableFuture<Void> slot = new CompletableFuture<>();
  private final SerialRunner callbacks = new SerialRunner(this::handlerFailed);

  private volatile int state = WAITING;
  private volatile CompletableFuture<Void> ticket;
  // Written by admit() before `callbacks` opens; read only by callbacks, which run after it.
  private ServerCall.Listener<ReqT> delegate;

  DelayedServerCall(
      ServerCall<ReqT, RespT> call,
      Metadata headers,
      ServerCallHandler<ReqT, RespT> next,
      Bulkhead bulkhead) {
    this.call = call;
    this.headers = headers;
    this.next = next;
    this.bulkhead = bulkhead;
    this.context = Context.current();
  }

  /** Asks the compartment for a slot; the handler starts when it is granted. */
  void start() {
    CompletableFuture<Void> submitted = bulkhead.submit(this::admit);
    ticket = submitted;
    if (state == WITHDRAWN) {
      submitted.cancel(false); // onCancel ran before `ticket` was set (C1)
    }
    submitted.whenComplete(this::admissionEnded);
  }

  private CompletionStage<Void> admit() {
    if (!STATE.compareAndSet(this, WAITING, ADMITTED)) {
      return CompletableFuture.completedFuture(null); // withdrawn during the hand-over (C2c)
    }
    context.run(this::startHandler);
    return slot;
  }

  private void startHandler() {
    try {
      delegate = next.startCall(new SlotCall(), headers);
    } catch (RuntimeException | Error failure) {
      // What gRPC's server does with a handler that throws in startCall: close the call with it.
      closeOnce(Status.fromThrowable(failure), new Metadata());
      delegate = new ServerCall.Listener<>() {};
    }
    callbacks.open();
  }

  private void admissionEnded(Void ignored, Throwable failure) {
    if (failure == null) {
      return;
    }
    BulkheadFullException rejection = Refusal.find(failure);
    if (rejection != null && STATE.compareAndSet(this, WAITING, REFUSED)) {
      call.close(Refusal.status(rejection), Refusal.trailers(rejection));
    }
  }

  /** A callback into the handler threw: close the call as gRPC's server would, free the slot. */
  private void handlerFailed(Throwable failure) {
    closeOnce(Status.fromThrowable(failure), new Metadata());
  }

  private void closeOnce(Status status, Metadata trailers) {
    if (!slot.isDone()) {
      try {
        call.close(status, trailers);
      } catch (IllegalStateException alreadyClosed) {
        // the handler closed it first
      } finally {
        slot.complete(null);
      }
    }
  }

  // ----------------------------------------------------------------------------------------------
  // From gRPC: kept until admission, then delivered in order, one at a time

  private void deliver(Runnable callback) {
    int now = state;
    if (now == WAITING || now == ADMITTED) {
      callbacks.execute(() -> context.run(callback));
    }
  }

  @Override
  public void onMessage(ReqT message) {
    deliver(() -> delegate.onMessage(message));
  }

  @Override
  public void onHalfClose() {
    deliver(() -> delegate.onHalfClose());
  }

  @Override
  public void onReady() {
    deliver(() -> delegate.onReady());
  }

  @Override
  public void onComplete() {
    deliver(
        () -> {
          try {
            delegate.onComplete();
          } finally {
            slot.complete(null);
          }
        });
  }

  @Override
  public void onCancel() {
    if (STATE.compareAndSet(this, WAITING, WITHDRAWN)) {
      CompletableFuture<Void> submitted = ticket;
      if (submitted != null) {
        submitted.cancel(false); // leaves the queue; null: start() cancels it (C1)
      }
      return;
    }
    deliver(
        () -> {
          try {
            delegate.onCancel();
          } finally {
            slot.complete(null);
          }
        });
  }

  /** The call the handler sees: closing it frees the slot. */
  private final class SlotCall extends SimpleForwardingServerCall<ReqT, RespT> {

    SlotCall() {
      super(call);
    }

    @Override
    public void close(Status status, Metadata trailers) {
      try {
        super.close(status, trailers);
      } finally {
        slot.complete(null);
      }
    }
  }
}
