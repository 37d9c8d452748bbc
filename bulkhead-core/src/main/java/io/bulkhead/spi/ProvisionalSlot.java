package io.bulkhead.spi;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.Permit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A slot taken by {@link ProvisionalAdmission} before the call it is for is known to be admitted.
 * <strong>Not for applications</strong>: see the description of package {@code io.bulkhead.spi}.
 *
 * <p>A slot leaves its provisional state exactly once, by whichever of these comes first: {@link
 * #confirm()} (the call is admitted: counted admitted, {@code onAdmitted} fires, and its latency
 * runs from now until {@link #close()}), {@link #abandon} (the call is rejected: counted rejected
 * with that reason, {@code onRejected} fires, the slot goes to the next waiter), or {@link
 * #close()} (the call was withdrawn: counted cancelled, {@code onCancelled} fires, the slot goes to
 * the next waiter). Whichever comes first wins; the others do nothing, so the slot is freed exactly
 * once.
 *
 * <p>While the integration makes the call wait for something else, it says so with {@link
 * #queued()}: the call then counts as waiting in the compartment's stats, not as in flight, and it
 * takes a place of the compartment's queue. Listeners run on the thread that calls these methods,
 * never while a lock is held: call them on a thread of the call or of its compartment, not on one
 * shared with others.
 *
 * <p>This class is thread-safe.
 */
public interface ProvisionalSlot extends Permit {

  /**
   * The call now waits for something besides its slot. It counts as waiting, not in flight, until
   * it leaves the provisional state, and {@code onQueued} fires unless it already waited for its
   * slot.
   *
   * @return false, changing nothing, if the compartment's queue is full ({@code maxQueue} callers
   *     wait here and in the compartment's own queue together) or the slot is no longer
   *     provisional: the integration then abandons the call with {@code QUEUE_FULL}
   */
  boolean queued();

  /**
   * What is left of the compartment's {@code maxWait} for this call, counted from when it asked for
   * its slot (for a slot it got at once, from its first wait at the latest): negative once it has
   * passed, {@link Long#MAX_VALUE} if waiting is unbounded. An integration that makes the call wait
   * bounds that wait by it, without reading a clock for a call that never waits.
   */
  long remainingWaitNanos();

  /**
   * Admits the call: counts it admitted, records how long it waited since it asked for the slot (if
   * it waited in the compartment's queue or was {@linkplain #queued() queued}), and fires {@code
   * onAdmitted}. The slot is now an ordinary one, freed by {@link #close()}.
   *
   * @return false, changing nothing, if the slot was abandoned or closed first: the integration
   *     must not run the call, and gives back whatever it took for it
   */
  boolean confirm();

  /**
   * Confirms, as {@link #confirm()} does, a slot that no other thread can reach yet: one its caller
   * took and has not handed on (a synchronous caller's, or an asynchronous call's before the stage
   * its task returns exists). Nothing can have closed or abandoned it, so it is always admitted,
   * and it is admitted without the compare-and-set {@code confirm()} needs to settle that race.
   * Calling it on a slot another thread may close or abandon at the same time breaks the counts.
   *
   * @throws IllegalStateException if the slot has left its provisional state already
   */
  void confirmOwned();

  /**
   * Rejects the call: frees the slot (to the next waiter in line), counts the rejection and fires
   * {@code onRejected}. Returns the exception for the caller, whose {@code retryAfter} is the
   * compartment's own estimate. If the slot was closed or abandoned first, nothing is counted or
   * freed again, and the exception is returned all the same.
   *
   * @throws IllegalStateException if the slot was confirmed: an admitted call is not rejected
   */
  BulkheadFullException abandon(BulkheadFullException.Reason reason);

  /**
   * Frees the slot the first time it is called, if {@link #abandon} has not: a confirmed call is
   * released (counted completed, {@code onReleased} fires with its latency), a provisional one is
   * withdrawn (counted cancelled, {@code onCancelled} fires). Later calls do nothing. Never throws.
   */
  @Override
  void close();

  /**
   * Closes the slot as {@link #close()} does and, if this call is the one that frees it, first runs
   * {@code first.accept(argument)} on this thread: what the integration took for the call is given
   * back once, however many threads close the slot at once, and before the slot can go to a waiter.
   * If {@code first} throws, the slot is freed all the same and the exception propagates.
   */
  <A extends @Nullable Object> void close(@Nullable Consumer<? super A> first, A argument);
}
