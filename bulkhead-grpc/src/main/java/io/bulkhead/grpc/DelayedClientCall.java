package io.bulkhead.grpc;

import io.bulkhead.Bulkhead;
import io.grpc.Attributes;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.Status;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/*
 * One client call through BulkheadClientInterceptor: the ClientCall the stub holds, started on the
 * channel only once the compartment admits it (Admission: the states, the races with admission and
 * the slot's single release).
 *
 * start() keeps the listener and submits. Until admission, what the stub does (request, sendMessage,
 * halfClose, a cancel that lost to admission) is kept in `ops`, a SerialRunner not yet open.
 * startReal() starts the real call with a listener whose onClose frees the slot, then opens `ops`,
 * which replays the kept operations in order and passes later ones through, one at a time. The slot
 * is freed when the real call closes, which it always does (success, failure, cancellation).
 *
 * Invariants (beside Admission's)
 *   K1 The listener gets exactly one onClose: from the real call once admitted, or from the refusal
 *      or the withdrawal, whichever won the CAS out of waiting.
 *   K2 Kept operations reach the real call only after its start and in the order the stub made them;
 *      a withdrawn or refused call's are dropped.
 *
 * Races: cancel() (or the caller's Context cancelled) vs admission is Admission.R2; a cancel() that lost is queued behind the kept
 * operations, so the real call is cancelled right after it starts.
 *
 * Threads: the listener's onClose for a refusal or a withdrawal runs on the call's executor
 * (CallOptions#getExecutor, which gRPC's blocking stubs drain on the caller's thread), or on the
 * thread that refused or cancelled when there is none. The real call starts on the starting thread
 * when a slot is free, otherwise on one of the compartment's own threads, inside the starting
 * thread's gRPC Context.
 */
/** A client call started on the channel only once its compartment admits it. */
final class DelayedClientCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {

  private final ClientCall<ReqT, RespT> real;
  private final Bulkhead bulkhead;
  private final @Nullable Executor executor;
  private final Admission admission = new Admission();
  private final SerialRunner ops = new SerialRunner(this::opFailed);
  // Written by start(), which the stub calls first; read after it.
  private volatile Listener<RespT> listener;

  DelayedClientCall(ClientCall<ReqT, RespT> real, Bulkhead bulkhead, @Nullable Executor executor) {
    this.real = real;
    this.bulkhead = bulkhead;
    this.executor = executor;
  }

  @Override
  public void start(Listener<RespT> listener, Metadata headers) {
    if (this.listener != null) {
      throw new IllegalStateException("call already started");
    }
    this.listener = listener;
    Context context = Context.current();
    // The caller's Context cancelled while the call waits (its deadline passed, the server call it
    // serves was cancelled): withdraw. Once started, the real call watches the Context itself.
    Context.CancellationListener contextCancelled =
        cancelled -> withdraw(contextStatus(cancelled), cancelled.cancellationCause());
    context.addListener(contextCancelled, Runnable::run);
    if (!admission.isLive()) {
      return; // the Context was cancelled already: the listener has been closed
    }
    admission.submit(
        bulkhead,
        () -> {
          context.removeListener(contextCancelled);
          context.run(() -> startReal(listener, headers));
        },
        rejection -> {
          context.removeListener(contextCancelled);
          closeListener(Refusal.status(rejection), Refusal.trailers(rejection));
        });
  }

  private static Status contextStatus(Context cancelled) {
    return cancelled.getDeadline() != null && cancelled.getDeadline().isExpired()
        ? Status.DEADLINE_EXCEEDED.withDescription(
            "the caller's deadline passed while the call waited for a slot")
        : Status.CANCELLED.withDescription("the caller's Context was cancelled");
  }

  /** Leaves the queue and closes the listener with {@code status}; false if already admitted. */
  private boolean withdraw(Status status, @Nullable Throwable cause) {
    if (!admission.withdraw()) {
      return false;
    }
    closeListener(status.withCause(cause), new Metadata());
    return true;
  }

  private void startReal(Listener<RespT> listener, Metadata headers) {
    try {
      real.start(new SlotListener(listener), headers);
    } finally {
      ops.open();
    }
  }

  private void closeListener(Status status, Metadata trailers) {
    Listener<RespT> target = listener;
    if (executor == null) {
      target.onClose(status, trailers);
    } else {
      executor.execute(() -> target.onClose(status, trailers));
    }
  }

  /** A replayed operation threw (a message that does not marshal, say): cancel the real call. */
  private void opFailed(Throwable failure) {
    real.cancel("a delayed operation failed", failure);
  }

  private void forward(Runnable op) {
    if (listener != null && admission.isLive()) {
      ops.execute(op);
    }
  }

  @Override
  public void request(int numMessages) {
    forward(() -> real.request(numMessages));
  }

  @Override
  public void sendMessage(ReqT message) {
    forward(() -> real.sendMessage(message));
  }

  @Override
  public void halfClose() {
    forward(real::halfClose);
  }

  @Override
  public void setMessageCompression(boolean enabled) {
    forward(() -> real.setMessageCompression(enabled));
  }

  @Override
  public void cancel(@Nullable String message, @Nullable Throwable cause) {
    if (listener == null) {
      return; // never started: nothing to cancel
    }
    Status status = Status.CANCELLED;
    if (message != null) {
      status = status.withDescription(message);
    }
    if (!withdraw(status, cause)) {
      forward(() -> real.cancel(message, cause));
    }
  }

  @Override
  public boolean isReady() {
    return ops.isOpen() && real.isReady();
  }

  @Override
  public Attributes getAttributes() {
    return ops.isOpen() ? real.getAttributes() : Attributes.EMPTY;
  }

  /** The listener the real call sees: its onClose frees the slot. */
  private final class SlotListener extends SimpleForwardingClientCallListener<RespT> {

    SlotListener(Listener<RespT> delegate) {
      super(delegate);
    }

    @Override
    public void onClose(Status status, Metadata trailers) {
      try {
        admission.release();
      } finally {
        super.onClose(status, trailers);
      }
    }
  }
}
