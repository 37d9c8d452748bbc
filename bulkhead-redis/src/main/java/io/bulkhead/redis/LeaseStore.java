package io.bulkhead.redis;

import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Where leases live: the few atomic operations a fleet compartment needs, so that a client other
 * than Lettuce can follow without touching the compartment. Every method is one round trip and
 * throws {@link StoreUnavailableException} when the store cannot answer within its command timeout.
 */
interface LeaseStore extends AutoCloseable {

  /**
   * The outcome of one admission attempt; {@code fleetLimit} is the limit the store admitted
   * against (the stored one, which may differ from the one this process asked with).
   */
  record Grant(boolean granted, long fencingToken, String epoch, int fleetLimit) {}

  /**
   * One lease to renew: its id and how long it may still live, in milliseconds (at most the TTL).
   */
  record Renewal(String leaseId, long validForMillis) {}

  /** What a renewal found for one compartment: the epoch now, and the leases that were gone. */
  record Renewed(String epoch, List<String> lost) {}

  /**
   * Takes a lease for {@code leaseId} if fewer unexpired leases are held than the compartment's
   * stored limit; {@code limit} is stored first if none is (the store lost its data, or nobody
   * published one).
   */
  Grant acquire(String compartment, int limit, long ttlMillis, String leaseId);

  /**
   * Makes {@code limit} the compartment's fleet-wide limit; returns the one it replaced, if any.
   */
  @Nullable Integer publishLimit(String compartment, int limit);

  /** Gives a lease back and wakes the fleet's waiters for that compartment. */
  void release(String compartment, String leaseId);

  /**
   * Renews the given leases of every compartment in one round trip. A lease granted under {@code
   * expectedEpoch[compartment]} that has expired is reported lost; if the compartment's epoch
   * changed (the store lost its data), every lease is registered again under the new epoch.
   */
  Map<String, Renewed> renew(
      Map<String, String> expectedEpoch, Map<String, List<Renewal>> leases, long ttlMillis);

  /** How many times a script had to be loaded again because the server had forgotten it. */
  long scriptReloads();

  @Override
  void close();
}
