package io.bulkhead.redis;

/**
 * A {@link io.bulkhead.Bulkhead} whose limit holds across every process that builds a compartment of
 * the same name on the same Redis. Built by {@link RedisCompartments#builder(String)}.
 *
 * <p>{@link #stats()} and listeners describe this process's side: a call is in flight locally from the
 * moment it is admitted here, including while it waits for the fleet to free a lease. A call refused
 * after that (the fleet freed no lease within {@code maxWait}, or the fallback policy said no) or a
 * submit cancelled while it waited for a lease is therefore counted admitted and completed there, not
 * rejected or cancelled; its caller still gets {@link io.bulkhead.BulkheadFullException} with
 * {@code WAIT_TIMEOUT} or {@code QUEUE_FULL}, and {@link #fleetStats()} counts it.
 * {@link #fleetStats()} adds what only a fleet compartment has.
 */
public interface FleetBulkhead extends io.bulkhead.Bulkhead {

  /** Leases, fallback switches and fleet refusals of this process. */
  FleetStats fleetStats();
}
