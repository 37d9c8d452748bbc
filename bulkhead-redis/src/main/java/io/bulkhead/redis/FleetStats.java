package io.bulkhead.redis;

/**
 * What a fleet compartment adds to {@link io.bulkhead.BulkheadStats}, for this process. Counters are
 * cumulative since the compartment was built.
 *
 * @param inFallback whether the compartment admits by its fallback policy now: Redis is unreachable,
 *     or answered again (or lost its data) less than one lease TTL ago
 * @param fallbackSwitches how many times it switched to its fallback policy
 * @param leasesHeld the calls of this process that hold a lease now
 * @param fallbackInFlight the calls of this process admitted without a lease (by the local share)
 * @param leaseWaiting the calls admitted locally that wait for the fleet to free a lease
 * @param fleetTimeouts the calls refused because the fleet freed no lease within {@code maxWait}. The
 *     local compartment counts them as admitted and completed (not as rejected), since they held a
 *     local slot while they waited
 * @param refusedByFallback the calls refused by the fallback policy (fail closed, or the share full),
 *     at once and without queueing; also counted admitted and completed by the local compartment
 * @param leasesLost leases found expired or gone while their call still ran, or before it could start
 *     (a pause past the TTL); a call that had not started waits for a new lease
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
