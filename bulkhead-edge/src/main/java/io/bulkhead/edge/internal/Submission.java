package io.bulkhead.edge.internal;

import io.bulkhead.Bulkhead;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/*
 * The part of an HTTP edge's request that submits itself to a compartment: it remembers the thread
 * inside submit(), so that get() can tell an admission at once (run the handler right here) from a
 * later one (hand it to the server's executor), and it holds the queued call, so that a request
 * abandoned while it waits (its client left, its server stopped) withdraws it.
 *
 * Race: abandonment vs submit's return. T2 abandons the request (the subclass's own CAS), then calls
 * withdraw(), which reads `admission`; T1 stores `admission` once submit() returns, then reads
 * abandoned(). Both are volatile, so at least one of them sees the other and cancels the queued call;
 * cancelling it twice is harmless.
 */
/**
 * A request that submits itself to a compartment (Bulkhead's HTTP edges only; not an API). The
 * subclass's {@code get()} runs when the compartment admits it; {@link #abandoned()} is the
 * subclass's own one-shot state.
 */
public abstract class Submission implements Supplier<CompletionStage<Void>> {

  private volatile @Nullable CompletableFuture<Void> admission;
  private volatile @Nullable Thread submitting;

  protected Submission() {}

  /**
   * Submits this request to {@code bulkhead} on the calling thread. Returns the queued call, or
   * null when the request was abandoned before submit() returned: the call is withdrawn here then.
   */
  protected final @Nullable CompletableFuture<Void> submitTo(Bulkhead bulkhead) {
    submitting = Thread.currentThread();
    CompletableFuture<Void> queued;
    try {
      queued = bulkhead.submit(this);
    } finally {
      submitting = null;
    }
    admission = queued;
    if (abandoned()) {
      queued.cancel(false);
      return null;
    }
    return queued;
  }

  /** Whether the caller is the thread inside {@link #submitTo}: admitted at once, from there. */
  protected final boolean onSubmittingThread() {
    return Thread.currentThread() == submitting;
  }

  /**
   * Withdraws the queued call; called after the subclass marked the request abandoned. Before
   * submit() has returned there is none yet, and {@link #submitTo} withdraws it.
   */
  protected final void withdraw() {
    CompletableFuture<Void> queued = admission;
    if (queued != null) {
      queued.cancel(false);
    }
  }

  /** Whether the request was abandoned while it waited: the subclass's one-shot state. */
  protected abstract boolean abandoned();
}
