package io.bulkhead.spi;

import io.bulkhead.Bulkhead;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Admission in two steps, for an integration whose calls need something besides a slot before they
 * may run (a lease from a fleet, say). <strong>Not for applications</strong>: see the description
 * of package {@code io.bulkhead.spi}.
 *
 * <p>Each method takes a slot exactly as its counterpart on {@link Bulkhead} does (same FIFO queue,
 * same {@code maxQueue} and {@code maxWait}, the same rejections counted when no slot comes) but
 * counts nothing as admitted: the slot is {@linkplain ProvisionalSlot provisional}. The integration
 * then either {@linkplain ProvisionalSlot#confirm() confirms} it, and the call is counted admitted
 * as if the compartment had admitted it at that moment, or {@linkplain ProvisionalSlot#abandon
 * abandons} it with a rejection reason, and the call is counted rejected, its slot going to the
 * next waiter in line: the stats, listeners and meters count what they would have counted had the
 * whole wait happened in the compartment's own queue.
 *
 * <pre>{@code
 * ProvisionalAdmission admission = ProvisionalAdmission.of(gate).orElseThrow();
 * ProvisionalSlot slot = admission.acquireProvisionally();
 * Lease lease = fleet.tryLease();
 * if (lease == null) {
 *   throw slot.abandon(BulkheadFullException.Reason.QUEUE_FULL); // counted as a rejection
 * }
 * slot.confirm();                                                 // counted as an admission
 * try {
 *   return task.call();
 * } finally {
 *   lease.release();
 *   slot.close();
 * }
 * }</pre>
 *
 * Implementations are thread-safe.
 */
public interface ProvisionalAdmission {

  /**
   * The two-step admission of {@code bulkhead}, if it offers one: compartments built by {@link
   * Bulkhead#builder(String)} do.
   */
  static Optional<ProvisionalAdmission> of(Bulkhead bulkhead) {
    return bulkhead instanceof ProvisionalAdmission
        ? Optional.of((ProvisionalAdmission) bulkhead)
        : Optional.empty();
  }

  /**
   * Takes a slot as {@link Bulkhead#acquire()} does, waiting in the compartment's queue if
   * necessary, and returns it provisional.
   *
   * @throws io.bulkhead.BulkheadFullException if no slot was obtained; counted as {@code acquire}
   *     counts it
   */
  ProvisionalSlot acquireProvisionally();

  /**
   * Takes a slot if one is free and nobody waits, as {@link Bulkhead#tryAcquire()} does; never
   * waits. An empty result counts as a rejection with reason {@code QUEUE_FULL}.
   */
  Optional<ProvisionalSlot> tryAcquireProvisionally();

  /** What {@link #admitAtOnce()} returns when it admitted nothing. */
  int NOT_TAKEN = 0;

  /**
   * Admits a call at once if a slot is free and nobody waits, exactly as {@link
   * Bulkhead#tryAcquire()} does when it admits (counted admitted, {@code onAdmitted} fired), but
   * without an object, and counting nothing when no slot is free (not even a rejection): for an
   * integration that holds what else its call needs before it asks (a slot of a fleet's lease, say)
   * and whose own permit stands for the slot. Returns {@link #NOT_TAKEN}, or a code that stands for
   * the slot, to pass to {@link #admittedAt} at once and, when the call ends, to {@link
   * #releaseTaken} exactly once: the integration's permit guarantees the once, under racing closes
   * too. A call that finds no slot at once takes the provisional path ({@link
   * #acquireProvisionally()} and the rest), which may wait.
   */
  int admitAtOnce();

  /**
   * The reading to pass to {@link #releaseTaken} with {@code admitted}, a code of {@link
   * #admitAtOnce()}: called right after it (the compartment's clock is read only if the call is
   * timed).
   *
   * @throws IllegalArgumentException if {@code admitted} is not such a code
   */
  long admittedAt(int admitted);

  /**
   * Frees the slot of a call {@link #admitAtOnce} admitted, as closing its permit does: counts it
   * completed, records its latency if it was timed, and hands the slot to the next waiter. Call it
   * once per slot; a second call frees a slot that is not this call's.
   *
   * @throws IllegalArgumentException if {@code admitted} is not a code of {@link #admitAtOnce()}
   */
  void releaseTaken(int admitted, long admittedAt);

  /**
   * Like {@link Bulkhead#submit}: when a slot is free, runs {@code task} with it, provisional, and
   * holds the slot until the stage {@code task} returns completes. The task runs on the caller's
   * thread when a slot was free at once, on one of the compartment's own threads when the call
   * waited for one. The task confirms the slot before it starts the real work, or abandons it and
   * returns a stage failed with the exception {@link ProvisionalSlot#abandon} returned.
   *
   * <p>Cancelling the returned future while the call waits for a slot withdraws it, as for {@code
   * submit}; once {@code task} has run it is forwarded to the stage {@code task} returned. When
   * that stage completes, the slot is {@linkplain ProvisionalSlot#close() closed}: released if it
   * was confirmed, counted cancelled if it was still provisional, nothing more if it was abandoned.
   */
  <T extends @Nullable Object> CompletableFuture<T> submitProvisionally(
      Function<? super ProvisionalSlot, ? extends CompletionStage<T>> task);
}
