package io.bulkhead.grpc;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.grpc.Attributes;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.Status;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/*
 * One client call through BulkheadClientInterceptor: the ClientCall the stub holds, started on the
 * channel only once the compartment admits it.
 *
 * Algorithm
 * ---------
 * start() keeps the listener and calls bulkhead.submit(this::admit), keeping the future as `ticket`.
 * Until admit() runs, the call is a node in the compartment's queue and no thread waits; what the
 * stub does meanwhile (request, sendMessage, halfClose, cancel after admission) is kept in `ops`, a
 * SerialRunner not yet open. admit() starts the real call with a listener whose onClose completes
 * `slot`, then opens `ops`, which replays the kept operations in order and passes later ones through,
 * one at a time. The compartment frees the slot when `slot` completes, that is when the real call
 * has closed (it always does, whether it succeeds, fails or is cancelled).
 *
 *   WAITING ──admit()──> ADMITTED
 *      ├──cancel()──> WITHDRAWN     (leaves the queue; the listener gets CANCELLED)
 *      └──refusal───> REFUSED       (the listener gets UNAVAILABLE with grpc-retry-pushback-ms)
 *
 * Invariants
 * ----------
 *   K1 The real call is started at most once, only by the admit() that moved WAITING -> ADMITTED.
 *   K2 The listener gets exactly one onClose: from the real call once admitted, or from the one CAS
 *      out of WAITING (WITHDRAWN, REFUSED) that won.
 *   K3 `ticket` is cancelled only by the cancel() that moved WAITING -> WITHDRAWN, so the compartment
 *      never forwards a cancellation to `slot`; the slot is freed exactly once, when the real call
 *      closes (the compartment frees behind a CAS of its own).
 *
 * Races, as interleavings: cancel() vs submit() and cancel() vs admission are the server's C1 and C2
 * (DelayedServerCall); a cancel() that loses to admission is queued behind the kept operations, so
 * the real call is cancelled right after it is started. A refusal and a cancel() both CAS out of
 * WAITING; the loser does nothing (K2).
 *
 * Threads: the listener's onClose for a refusal or a withdrawal runs on the call's executor
 * (CallOptions#getExecutor, as gRPC's blocking stubs need), or on the thread that refused or
 * cancelled when there is none. admit() runs on the starting thread when a slot is free, otherwise on
 * one of the compartment's own threads, inside the starting thread's gRPC Context.
 */
/** A client call started on the channel only once its compartment admits it. */
final class DelayedClientCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {

  private static final int IDLE = -1;
  private static final int WAITING = 0;
  private static final int ADMITTED = 1;
  private static final int WITHDRAWN = 2;
  private static final int REFUSED = 3;

  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(DelayedClientCall.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final ClientCall<ReqT, RespT> real;
  private final Bulkhead bulkhead;
  private final @Nullable Executor executor;
  // Completed when the real call has closed; the compartment then frees the slot (K3).
  private final CompletableFuture<Void> slot = new CompletableFuture<>();
  private final SerialRunner ops = new SerialRunner(this::opFailed);

  private volatile int state = IDLE;
  private volatile CompletableFuture<Void> ticket;
  private Listener<RespT> listener;
  private Metadata headers;
  private Context context;

  DelayedClientCall(ClientCall<ReqT, RespT> real, Bulkhead bulkhead, @Nullable Executor executor) {
    this.real = real;
    this.bulkhead = bulkhead;
    this.executor = executor;
  }

  @Override
  public void start(Listener<RespT> listener, Metadata headers) {
    if (!STATE.compareAndSet(this, IDLE, WAITING)) {
      throw new IllegalStateException("call already started");
    }
    this.listener = listener;
    this.headers = headers;
    this.context = Context.current();
    CompletableFuture<Void> submitted = bulkhead.submit(this::admit);
    ticket = submitted;
    if (state == WITHDRAWN) {
      submitted.cancel(false); // cancel() ran before `ticket` was set
    }
    submitted.whenComplete(this::admissionEnded);
  }

  private CompletionStage<Void> admit() {
    if (!STATE.compareAndSet(this, WAITING, ADMITTED)) {
      return CompletableFuture.completedFuture(null); // withdrawn during the hand-over
    }
    context.run(
        () -> {
          try {
            real.start(new SlotListener(listener), headers);
          } finally {
            ops.open();
          }
        });
    return slot;
  }

  private void admissionEnded(Void ignored, Throwable failure) {
    if (failure == null) {
      return;
    }
    BulkheadFullException rejection = Refusal.find(failure);
    if (rejection != null && STATE.compareAndSet(this, WAITING, REFUSED)) {
      closeListener(Refusal.status(rejection), Refusal.trailers(rejection));
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
    int now = state;
    if (now == WAITING || now == ADMITTED) {
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
    if (STATE.compareAndSet(this, WAITING, WITHDRAWN)) {
      CompletableFuture<Void> submitted = ticket;
      if (submitted != null) {
        submitted.cancel(false); // leaves the queue; null: start() cancels it
      }
      Status status = Status.CANCELLED;
      if (message != null) {
        status = status.withDescription(message);
      }
      closeListener(status.withCause(cause), new Metadata());
      return;
    }
    forward(() -> real.cancel(message, cause));
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
        slot.complete(null);
      } finally {
        super.onClose(status, trailers);
      }
    }
  }
}
