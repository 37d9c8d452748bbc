package io.bulkhead.redis;

import org.jspecify.annotations.Nullable;

/**
 * A call that is handed the fencing token of the grant it runs under; see {@link FleetPermit}.
 *
 * @param <T> what the call returns
 */
@FunctionalInterface
public interface FencedCall<T extends @Nullable Object> {

  /** Runs the call; {@code fencingToken} is 0 if it was admitted without a lease. */
  T call(long fencingToken) throws Exception;
}
