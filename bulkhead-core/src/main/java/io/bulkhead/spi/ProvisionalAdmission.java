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

  /** What {@link #takeAtOnce()} returns when it took no slot. */
  int NOT_TAKEN = 0;

  /**
   * Takes a slot if one is free and nobody waits, as {@link #tryAcquireProvisionally()} does, but
   * without an object and without counting anything (not even a rejection when none is free): for
   * an integration whose own permit stands for the slot. Returns {@link #NOT_TAKEN}, or a code that
   * stands for the slot taken, which the integration passes to exactly one of two paths:
   *
   * <ul>
   *   <li>{@link #confirmTaken} (the call is admitted, as by {@link
   *       ProvisionalSlot#confirmOwned()}) and, when the call ends, {@link #releaseTaken} exactly
   *       once: the integration's permit guarantees the once, under racing closes too;
   *   <li>{@link #slotOf}, which makes the slot a {@link ProvisionalSlot}, as {@link
   *       #tryAcquireProvisionally()} would have returned it: to wait in it, abandon or close it.
   * </ul>
   */
  int takeAtOnce();

  /**
   * The slot {@code taken} (a code of {@link #takeAtOnce()}, not confirmed) as a provisional slot.
   *
   * @throws IllegalArgumentException if {@code taken} is not such a code
   */
  ProvisionalSlot slotOf(int taken);

  /**
   * Admits the call of the slot {@code taken} (a code of {@link #takeAtOnce()}): counts it admitted
   * and fires {@code onAdmitted}. Returns the reading to pass to {@link #releaseTaken}.
   *
   * @throws IllegalArgumentException if {@code taken} is not such a code
   */
  long confirmTaken(int taken);

  /**
   * Frees the slot of a call {@link #confirmTaken} admitted, as closing its permit does: counts it
   * completed, records its latency if it was timed, and hands the slot to the next waiter. Call it
   * once per slot; a second call frees a slot that is not this call's.
   *
   * @throws IllegalArgumentException if {@code taken} is not a code of {@link #takeAtOnce()}
   */
  void releaseTaken(int taken, long admittedAt);

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
