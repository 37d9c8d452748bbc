package io.bulkhead;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * One call from {@link Bulkhead#submit}, and the future its caller holds.
 *
 * <p>Phases: {@code QUEUED} (waiting, or not yet started) → {@code RUNNING} (admitted: it owns a
 * slot) → {@code FINISHED} (the slot was freed). The only way out of {@code RUNNING} is the CAS in
 * {@link #finish}, so the slot is freed exactly once whether the supplier throws, returns null, or
 * its stage completes normally, exceptionally or by cancellation.
 *
 * <p>The future is completed by the compartment through {@code super.complete*}. The public {@link
 * #complete}, {@link #completeExceptionally} and {@link #cancel} are therefore always someone else:
 * the caller cancelling, or {@code orTimeout}/{@code completeOnTimeout} firing. They withdraw a
 * waiting call from the queue, or forward a cancellation to the running stage (whose completion
 * then frees the slot). The races with the grant and with {@link #start} are written out beside the
 * algorithm, in {@link DefaultBulkhead}'s design comment (cancel vs grant, cancel vs start).
 *
 * <p>Threads, as {@link Bulkhead#submit} promises: {@link #start} runs on the caller's thread when
 * a slot was free, and on the compartment's executor when the call waited and was handed one;
 * {@link #expire} runs on that executor, never on the timer. {@code finish} runs on whichever
 * thread completes the stage: it frees the slot first (a waiter it grants is handed to the
 * executor, so it starts without waiting for anything below) and then completes this future,
 * running the caller's dependents on that thread.
 *
 * <p>Dependent stages ({@code thenApply} and so on) are plain {@link CompletableFuture}s, through
 * {@link #newIncompleteFuture()}, so none of this leaks into them.
 */
final class AsyncCall<T> extends CompletableFuture<T> {

  private static final int QUEUED = 0;
  private static final int RUNNING = 1;
  private static final int FINISHED = 2;

  private static final VarHandle PHASE;

  static {
    try {
      PHASE = MethodHandles.lookup().findVarHandle(AsyncCall.class, "phase", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final DefaultBulkhead bulkhead;
  private Supplier<? extends CompletionStage<T>> task; // dropped once started
  private volatile int phase = QUEUED;
  private volatile CompletionStage<T> stage;
  // Non-null only while the call is in the queue, so that only a queued call can be withdrawn.
  volatile AsyncWaiter waiter;
  private boolean timed;
  private long admittedAt;
  // For DefaultBulkhead.submitProvisionally: the slot the task confirms or abandons, which decides
  // what finishing counts (Provisional); null for an ordinary submit.
  final Provisional provisional;

  AsyncCall(DefaultBulkhead bulkhead, Supplier<? extends CompletionStage<T>> task) {
    this(bulkhead, task, null);
  }

  AsyncCall(
      DefaultBulkhead bulkhead,
      Supplier<? extends CompletionStage<T>> task,
      Provisional provisional) {
    this.bulkhead = bulkhead;
    this.task = task;
    this.provisional = provisional;
  }

  /**
   * Runs the supplier; the caller has just obtained a slot for this call, at {@code admittedAt}.
   */
  void start(boolean timed, long admittedAt) {
    this.timed = timed;
    this.admittedAt = admittedAt;
    phase = RUNNING;
    Supplier<? extends CompletionStage<T>> supplier = task;
    task = null;
    CompletionStage<T> started;
    try {
      started = supplier.get();
      if (started == null) {
        throw new NullPointerException(
            "the task submitted to bulkhead '"
                + bulkhead.name()
                + "' returned null instead of a CompletionStage");
      }
    } catch (Throwable failure) {
      finish(null, failure);
      return;
    }
    stage = started;
    if (isDone()) {
      cancelStage(started); // R4: completed from outside while the supplier ran
    }
    try {
      // Exactly CompletableFuture: subclasses may refuse these calls (minimalCompletionStage's
      // throws UnsupportedOperationException from isDone()).
      if (started.getClass() == CompletableFuture.class) {
        CompletableFuture<T> future = (CompletableFuture<T>) started;
        if (future.isDone() && !future.isCompletedExceptionally()) {
          // Already succeeded (a cache hit, a fallback): finish without registering a callback.
          finish(future.join(), null);
          return;
        }
      }
      started.whenComplete(this::finish);
    } catch (Throwable brokenStage) {
      // A stage that will not take a callback would strand the slot: free it now.
      finish(null, brokenStage);
    }
  }

  private void finish(T value, Throwable failure) {
    if (!PHASE.compareAndSet(this, RUNNING, FINISHED)) {
      return;
    }
    if (provisional == null) {
      bulkhead.release(timed, admittedAt); // a waiter it grants starts elsewhere, not after us (R8)
    } else {
      provisional.close(); // released, withdrawn, or nothing if the task abandoned it
    }
    if (failure != null) {
      super.completeExceptionally(failure);
    } else {
      super.complete(value);
    }
  }

  /** Rejection before admission: the call never held a slot. */
  void reject(BulkheadFullException rejection) {
    super.completeExceptionally(rejection);
  }

  /** Called by the timer after it moved this call's waiter to TIMED_OUT and unlinked it. */
  void expire() {
    super.completeExceptionally(bulkhead.reject(BulkheadFullException.Reason.WAIT_TIMEOUT));
  }

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    boolean withdrawn = withdraw();
    boolean done = super.cancel(mayInterruptIfRunning);
    if (done && !withdrawn) {
      forwardCancellation();
    }
    return done;
  }

  @Override
  public boolean complete(T value) {
    boolean withdrawn = withdraw();
    boolean done = super.complete(value);
    if (done && !withdrawn) {
      forwardCancellation();
    }
    return done;
  }

  @Override
  public boolean completeExceptionally(Throwable failure) {
    boolean withdrawn = withdraw();
    boolean done = super.completeExceptionally(failure);
    if (done && !withdrawn) {
      forwardCancellation();
    }
    return done;
  }

  @Override
  public <U> CompletableFuture<U> newIncompleteFuture() {
    return new CompletableFuture<>();
  }

  private boolean withdraw() {
    AsyncWaiter w = waiter;
    if (w != null && w.abandon(Waiter.CANCELLED)) {
      bulkhead.withdrawn(w);
      return true;
    }
    return false;
  }

  private void forwardCancellation() {
    CompletionStage<T> running = stage;
    if (running != null) {
      cancelStage(running);
    }
  }

  private static void cancelStage(CompletionStage<?> running) {
    try {
      running.toCompletableFuture().cancel(true);
    } catch (UnsupportedOperationException notConvertible) {
      // A stage that cannot be converted cannot be cancelled either; its completion frees the slot.
    }
  }
}
