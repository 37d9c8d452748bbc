package io.bulkhead.redis;

/**
 * A {@link io.bulkhead.Bulkhead} whose limit holds across every process that builds a compartment
 * of the same name on the same Redis. Built by {@link RedisCompartments#builder(String)}.
 *
 * <p>{@link #stats()} and listeners describe this process's side and count as any compartment
 * counts: a call is admitted once it holds both a local slot and a lease (or a slot of the fallback
 * share). A call that waits for the fleet to free a lease counts as waiting, not in flight; if none
 * comes within {@code maxWait} it is rejected with {@code WAIT_TIMEOUT}, a refusal by the fallback
 * policy is rejected with {@code QUEUE_FULL}, and a submit cancelled while it waits is counted
 * cancelled; the {@link io.bulkhead.BulkheadFullException}'s {@code retryAfter} is the
 * compartment's own estimate. {@link #fleetStats()} adds what only a fleet compartment has.
 */
public interface FleetBulkhead extends io.bulkhead.Bulkhead {

  /** Leases, fallback switches and fleet refusals of this process. */
  FleetStats fleetStats();
}
