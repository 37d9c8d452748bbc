package io.bulkhead.redis;

import io.bulkhead.BulkheadFullException;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * Why the fleet refused a call, for its caller to abandon the gate's slot with: the gate then
 * counts the rejection and builds the exception (with its own retry-after estimate) on the caller's
 * side, never on a thread the fleet shares. Thrown on hot paths, so it has no stack trace.
 */
final class Refusal extends RuntimeException {

  private static final long serialVersionUID = 1L;

  final transient BulkheadFullException.Reason reason;

  /**
   * The fleetStats counter that says this rejection came from the fleet (fleetTimeouts,
   * refusedByFallback), added to when a call is rejected with it; null for the others.
   */
  final transient @Nullable LongAdder countedIn;

  Refusal(BulkheadFullException.Reason reason, @Nullable LongAdder countedIn) {
    super(reason.name(), null, false, false);
    this.reason = reason;
    this.countedIn = countedIn;
  }
}
