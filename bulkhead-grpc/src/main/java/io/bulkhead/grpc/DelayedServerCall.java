package io.bulkhead.grpc;

import io.bulkhead.Bulkhead;
import io.grpc.Context;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;

/*
 * One server call through BulkheadServerInterceptor: the listener gRPC delivers to, whose handler is
 * started only once the compartment admits the call (Admission: the states, the races with
 * admission and the slot's single release).
 *
 * Until admission the handler has not been started, and every listener callback gRPC delivers is
 * kept in `callbacks` (a SerialRunner not yet open). startHandler() starts it (next.startCall) with a
 * call whose close() frees the slot, then opens `callbacks`, which replays what was kept, in order,
 * and passes later callbacks through, one at a time. The slot is freed at the handler's close(), or
 * when onComplete or onCancel has been delivered to the handler, whichever is first.
 *
 * Invariants (beside Admission's)
 *   G1 Kept callbacks reach the handler only after its start and in the order gRPC delivered them; a
 *      withdrawn or refused call's are dropped.
 *   G2 Only one thread closes the ServerCall: before admission that is the refusal (nothing else
 *      touches the call: callbacks are only kept); after it, the handler (or startHandler/handlerFailed
 *      when the handler threw, as gRPC's own server does).
 *   G3 Every way an admitted call ends frees the slot: close(), onComplete, onCancel, a handler that
 *      throws.
 *
 * Races, as interleavings
 *   C1 onCancel vs admission (a deadline that passes as a slot is handed over): Admission.R2. If the
 *      admission won, onCancel is queued like any callback: the handler sees it after its start, and
 *      the slot is freed once it has been delivered.
 *   C2 close vs onCancel vs onComplete after admission: each frees the slot; the first wins.
 *
 * Threads: the handler starts on the transport's thread when a slot is free and on one of the
 * compartment's own threads when the call waited, inside the call's gRPC Context (deadline,
 * cancellation), as are the replayed callbacks. Later callbacks run on gRPC's thread, or on whichever
 * thread is replaying at that moment, never two at once.
 */
/** A server call whose handler starts only once its compartment admits it. */
final class DelayedServerCall<ReqT, RespT> extends ServerCall.Listener<ReqT> {

  private final ServerCall<ReqT, RespT> call;
  private final Metadata headers;
  private final ServerCallHandler<ReqT, RespT> next;
  private final Context context;
  private final Admission admission = new Admission();
  private final SerialRunner callbacks = new SerialRunner(this::handlerFailed);
  // Written by startHandler() before `callbacks` opens; read only by callbacks, which run after it.
  private ServerCall.Listener<ReqT> delegate;

  DelayedServerCall(
      ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
    this.call = call;
    this.headers = headers;
    this.next = next;
    this.context = Context.current();
  }

  /** Asks the compartment for a slot; the handler starts when it is granted. */
  void start(Bulkhead bulkhead) {
    admission.submit(
        bulkhead,
        () -> context.run(this::startHandler),
        rejection -> call.close(Refusal.status(rejection), Refusal.trailers(rejection)));
  }

  private void startHandler() {
    try {
      delegate = next.startCall(new SlotCall(), headers);
    } catch (RuntimeException | Error failure) {
      // What gRPC's server does with a handler that throws in startCall: close the call with it.
      closeOnce(Status.fromThrowable(failure));
      delegate = new ServerCall.Listener<>() {};
    }
    callbacks.open();
  }

  /** A callback into the handler threw: close the call as gRPC's server would, free the slot. */
  private void handlerFailed(Throwable failure) {
    closeOnce(Status.fromThrowable(failure));
  }

  private void closeOnce(Status status) {
    if (!admission.isReleased()) {
      try {
        call.close(status, new Metadata());
      } catch (IllegalStateException alreadyClosed) {
        // the handler closed it first
      } finally {
        admission.release();
      }
    }
  }

  // ----------------------------------------------------------------------------------------------
  // From gRPC: kept until admission, then delivered in order, one at a time

  private void deliver(Runnable callback) {
    if (admission.isLive()) {
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
            admission.release();
          }
        });
  }

  @Override
  public void onCancel() {
    if (admission.withdraw()) {
      return; // left the queue; the handler never hears of this call
    }
    deliver(
        () -> {
          try {
            delegate.onCancel();
          } finally {
            admission.release();
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
        admission.release();
      }
    }
  }
}
