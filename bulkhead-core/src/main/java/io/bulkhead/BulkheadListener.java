package io.bulkhead;

/**
 * Receives a compartment's events as they happen: admitted, queued, rejected, cancelled, released.
 *
 * <p>Listeners feed metrics, traces and logs. They are called after the compartment's state has
 * changed and never while it holds its lock, so a listener can neither block another caller's
 * admission nor strand a slot. Which thread calls them: the caller's, for everything that happens
 * on its way in ({@code onQueued}, an immediate admission or rejection, {@code onCancelled} on the
 * thread that cancels); the thread that ends the call, for {@code onReleased}; and one of the
 * compartment's own threads for an asynchronous call's {@code onAdmitted} after waiting and its
 * {@code onRejected} when {@code maxWait} passes. Never a thread shared with other compartments, so
 * a listener that blocks slows its own compartment's callers at worst, never another compartment's
 * timeouts. A listener that throws is contained: the exception is counted in {@link
 * BulkheadStats#listenerFailures()}, logged once per listener at {@code WARNING} through {@link
 * System.Logger}, and the call goes on as if nothing had happened.
 *
 * <p>Durations are passed as long nanoseconds rather than {@link java.time.Duration} so that a
 * listener costs no allocation on the hot path; every method has a no-op default so an
 * implementation overrides only what it needs. Keep listeners fast: they run inline.
 */
public interface BulkheadListener {

  /**
   * A call was admitted and now holds a slot.
   *
   * @param waitedNanos how long it waited in the queue; 0 when a slot was free at once
   */
  default void onAdmitted(Compartment bulkhead, long waitedNanos) {}

  /** Every slot was taken and the call joined the queue. */
  default void onQueued(Compartment bulkhead) {}

  /**
   * The call was not admitted and will receive a {@link BulkheadFullException} with this reason.
   */
  default void onRejected(Compartment bulkhead, BulkheadFullException.Reason reason) {}

  /**
   * A queued asynchronous call was withdrawn by its caller (its future was cancelled or completed
   * by someone else) before it was admitted. It never held a slot.
   *
   * @param waitedNanos how long it had waited
   */
  default void onCancelled(Compartment bulkhead, long waitedNanos) {}

  /**
   * An admitted call finished and gave its slot back (to the compartment or to the oldest waiter).
   *
   * @param heldNanos how long it held the slot: the admitted latency of the call. Every call is
   *     timed while a listener is attached; only a call admitted before the first listener was
   *     added and released after it may report 0
   */
  default void onReleased(Compartment bulkhead, long heldNanos) {}
}
