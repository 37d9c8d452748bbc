package io.bulkhead.redis;

import io.bulkhead.Permit;

/**
 * A slot of a {@link FleetBulkhead}, with the fencing token of the grant it runs under.
 *
 * <p>Every grant of slots to a process takes a new token from a counter in Redis that only grows
 * (it is at least the server's clock in microseconds, so it keeps growing after Redis lost its data
 * or the fleet's keys expired). A call carries the token of the last grant its process got before
 * the call was admitted; a call admitted by the fallback policy, without a lease, carries 0. So a
 * call admitted after another process lost its slots (cut off, or paused past its lease) carries a
 * higher token than any call of that process's lost lease. A dependency that can check a token
 * (with limit 1, a classic fencing token: keep the highest seen, refuse lower ones) can refuse such
 * a stale holder.
 *
 * <p>This class is thread-safe.
 */
public interface FleetPermit extends Permit {

  /** The token of the grant this call runs under; 0 if it was admitted without a lease. */
  long fencingToken();
}
