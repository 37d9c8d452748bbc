package io.bulkhead.redis;

/**
 * What a fleet compartment adds to {@link io.bulkhead.BulkheadStats}, for this process. Counters
 * are cumulative since the compartment was built.
 *
 * @param inFallback whether the compartment admits by its fallback policy now: Redis has not
 *     answered since start-up, or no sync succeeded for a whole lease TTL
 * @param fallbackSwitches how many times it switched to its fallback policy
 * @param leaseSlots how many calls this process's lease lets it run now (0 in fallback)
 * @param leaseInUse the calls of this process running under its lease now
 * @param fallbackInFlight the calls of this process admitted without a lease (by the local share)
 * @param leaseWaiting the calls that hold a local slot and wait for a slot of the lease (also in
 *     {@link io.bulkhead.BulkheadStats#waiting()})
 * @param fleetTimeouts the calls refused because no slot of the lease came within {@code maxWait};
 *     also in {@link io.bulkhead.BulkheadStats#rejected(io.bulkhead.BulkheadFullException.Reason)}
 *     with {@code WAIT_TIMEOUT}
 * @param refusedByFallback the calls refused by the fallback policy (fail closed, or the share
 *     full), at once and without queueing; also in {@code rejected} with {@code QUEUE_FULL}
 * @param leasesLost how many times Redis answered a sync without this process's record: it had
 *     dropped it (no sync succeeded for longer than the lease TTL plus {@code maxCallDuration}) or
 *     lost its data; or a call whose slot could no longer be covered when it was about to start (a
 *     paused process), which waits for another within what is left of its {@code maxWait}
 * @param callsOverran the calls that ran longer than {@code maxCallDuration}: counted by the fleet
 *     only while this process reaches Redis
 * @param learning whether Redis grants no new slots now, because it lost its data less than one
 *     lease term (lease TTL plus {@code maxCallDuration}) ago
 * @param fencingToken the token calls admitted now carry; 0 before the first grant
 * @param scriptReloads how many times a script was loaded again after the server answered NOSCRIPT
 * @param reconnects how many times this process's connections to Redis were closed and opened again
 *     after commands in a row timed out
 */
public record FleetStats(
    boolean inFallback,
    long fallbackSwitches,
    int leaseSlots,
    int leaseInUse,
    int fallbackInFlight,
    int leaseWaiting,
    long fleetTimeouts,
    long refusedByFallback,
    long leasesLost,
    long callsOverran,
    boolean learning,
    long fencingToken,
    long scriptReloads,
    long reconnects) {}
