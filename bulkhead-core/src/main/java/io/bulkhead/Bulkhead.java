package io.bulkhead;

import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A compartment: a limit on the calls in flight to one dependency, a short bounded queue, a maximum
 * wait, and a fast, typed "no" when it is full.
 *
 * <p>When every slot is taken, a caller joins the queue if fewer than {@code maxQueue} wait, and
 * waits at most {@code maxWait}. A freed slot goes straight to the oldest waiter (FIFO hand-off):
 * while anyone waits, no newcomer takes a slot, not even through {@link #tryAcquire()}. A caller
 * that cannot queue, or waits too long, gets a {@link BulkheadFullException} at once; the
 * dependency is never called for it.
 *
 * <pre>{@code
 * Bulkhead llm = Bulkhead.builder("llm").limit(10).maxQueue(20).maxWait(Duration.ofSeconds(1)).build();
 * String answer = llm.call(() -> client.complete(prompt));                 // sync, caller's thread
 * CompletableFuture<String> f = llm.submit(() -> client.completeAsync(p)); // async, no thread held
 * Optional<Permit> p = llm.tryAcquire();                                   // never waits
 * }</pre>
 *
 * <p>Waiting parks with {@link java.util.concurrent.locks.LockSupport}; no waiting path uses a
 * monitor, so a virtual thread waiting for a slot never pins its carrier. A slot is freed exactly
 * once, whether the call returns, throws, or its stage completes exceptionally or is cancelled.
 *
 * <p>Everything that reads or manages the compartment (its name, settings, numbers, limit,
 * listeners and budget) is on {@link Compartment}, which registries, metrics and dashboards take;
 * this interface adds admission. A worker pool's or a connection pool's view is a {@code
 * Compartment} but not a {@code Bulkhead}: work reaches those through their own {@code submit} or
 * {@code getConnection}, so {@link BulkheadRegistry#bulkhead(String)} finds only compartments that
 * admit calls themselves.
 *
 * <p>This interface is thread-safe.
 */
public interface Bulkhead extends Compartment {

  /** Starts building a compartment with this name. */
  static BulkheadBuilder builder(String name) {
    return new BulkheadBuilder(name);
  }

  /**
   * Runs {@code task} on the caller's thread while holding a slot, waiting for one if necessary.
   *
   * <p>If every slot is taken and fewer than {@code maxQueue} callers wait, the thread parks for at
   * most {@code maxWait}. The slot is freed when {@code task} returns or throws; its result or
   * exception is passed through unchanged.
   *
   * <p>If the thread is interrupted while it waits, it leaves the queue, its interrupt status is
   * set again, and {@link BulkheadFullException} with reason {@code INTERRUPTED} is thrown. A
   * thread that arrives already interrupted and would have to wait is rejected the same way without
   * queuing. If a slot was handed over at the same moment as the interrupt, the hand-off wins: the
   * task runs with the interrupt status set.
   *
   * @throws BulkheadFullException if the call was not admitted; {@code task} was not run
   * @throws Exception whatever {@code task} throws
   */
  <T extends @Nullable Object> T call(Callable<T> task) throws Exception;

  /**
   * Starts {@code task} when a slot is free and holds the slot until the stage it returns
   * completes.
   *
   * <p>A waiting call holds no thread. The supplier runs on the caller's thread if a slot is free;
   * a call that had to wait starts on one of the compartment's own threads (daemon threads named
   * {@code bulkhead-<name>-<n>}, started as needed), never on the thread that freed the slot, so
   * that the releasing caller's code and the waiting call's never wait for each other. Rejection
   * completes the returned future exceptionally with {@link BulkheadFullException}: on the caller's
   * thread when the queue is full, on one of the compartment's own threads when {@code maxWait}
   * passes. So the dependents you attach to the future run on the thread that completes your stage,
   * on the caller's thread, or on the compartment's own; never on a timer or thread shared with
   * other compartments, and a dependent that blocks holds up only its own call.
   *
   * <p>Cancelling the returned future (or completing it yourself, as {@code orTimeout} does) while
   * the call waits removes it from the queue. After admission it forwards the cancellation to the
   * stage, and the slot is freed only when that stage completes, so a timeout never lets more calls
   * reach the dependency than the limit. If the stage you return is a bare {@link
   * CompletableFuture} that completes on cancel while the work goes on, the slot frees at that
   * moment: return a stage that completes when the work truly ends.
   *
   * <p>If the supplier throws or returns null, the slot is freed and the future fails with that
   * exception (a {@link NullPointerException} for null).
   */
  <T extends @Nullable Object> CompletableFuture<T> submit(
      Supplier<? extends CompletionStage<T>> task);

  /**
   * Takes a slot if one is free and nobody waits; never waits. The slot is held until the permit is
   * closed. An empty result counts as a rejection with reason {@code QUEUE_FULL}.
   */
  Optional<Permit> tryAcquire();

  /**
   * Takes a slot, waiting like {@link #call} when necessary, and holds it until the permit is
   * closed: for callers that hold a slot across callbacks or for a streamed response.
   *
   * @throws BulkheadFullException if no slot was obtained
   */
  Permit acquire();
}
