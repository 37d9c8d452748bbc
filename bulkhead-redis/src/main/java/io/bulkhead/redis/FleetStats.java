package io.bulkhead.redis;

/**
 * What a fleet compartment adds to {@link io.bulkhead.BulkheadStats}, for this process. Counters
 * are cumulative since the compartment was built.
 *
 * @param inFallback whether the compartment admits by its fallback policy now: Redis is
 *     unreachable, or answered again (or lost its data) less than one lease TTL ago
 * @param fallbackSwitches how many times it switched to its fallback policy
 * @param leasesHeld the calls of this process that hold a lease now
 * @param fallbackInFlight the calls of this process admitted without a lease (by the local share)
 * @param leaseWaiting the calls that hold a local slot and wait for the fleet to free a lease (also
 *     in {@link io.bulkhead.BulkheadStats#waiting()})
 * @param fleetTimeouts the calls refused because the fleet freed no lease within {@code maxWait};
 *     also in {@link io.bulkhead.BulkheadStats#rejected(io.bulkhead.BulkheadFullException.Reason)}
 *     with {@code WAIT_TIMEOUT}
 * @param refusedByFallback the calls refused by the fallback policy (fail closed, or the share
 *     full), at once and without queueing; also in {@code rejected} with {@code QUEUE_FULL}
 * @param leasesLost leases found expired or gone while their call still ran, or before it could
 *     start (a pause past the TTL); a call that had not started gives its lease back and waits for
 *     a new one within what is left of its {@code maxWait}, counted waiting meanwhile (and in
 *     {@code fleetTimeouts} if none comes)
 * @param scriptReloads how many times a script was loaded again after the server answered NOSCRIPT
 */
public record FleetStats(
    boolean inFallback,
    long fallbackSwitches,
    int leasesHeld,
    int fallbackInFlight,
    int leaseWaiting,
    long fleetTimeouts,
    long refusedByFallback,
    long leasesLost,
    long scriptReloads) {}
