package io.bulkhead.redis;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.LongFunction;
import org.jspecify.annotations.Nullable;

/**
 * A {@link io.bulkhead.Bulkhead} whose limit holds across every process that builds a compartment
 * of the same name on the same Redis. Built by {@link RedisCompartments#builder(String)}.
 *
 * <p>Admission never waits for Redis: each process admits against the slots its lease holds, in
 * memory, and a background thread keeps the lease in step with the fleet. {@link #stats()} and
 * listeners describe this process's side and count as any compartment counts: a call that waits for
 * a slot of the lease counts as waiting, not in flight; if none comes within {@code maxWait} it is
 * rejected with {@code WAIT_TIMEOUT}, a refusal by the fallback policy is rejected with {@code
 * QUEUE_FULL}, and a submit cancelled while it waits is counted cancelled; the {@link
 * io.bulkhead.BulkheadFullException}'s {@code retryAfter} is the compartment's own estimate. {@link
 * #fleetStats()} adds what only a fleet compartment has. Permits from {@link #acquire()} and {@link
 * #tryAcquire()} are {@link FleetPermit}s, which carry the call's fencing token.
 */
public interface FleetBulkhead extends io.bulkhead.Bulkhead {

  /** This process's lease, fallbacks and fleet refusals. */
  FleetStats fleetStats();

  /** Like {@link #acquire()} of any compartment; the permit carries the fencing token. */
  @Override
  FleetPermit acquire();

  /**
   * Like {@link #call(java.util.concurrent.Callable)}, handing {@code task} the fencing token of
   * the grant it runs under (see {@link FleetPermit}).
   */
  <T extends @Nullable Object> T callFenced(FencedCall<T> task) throws Exception;

  /**
   * Like {@link #submit(java.util.function.Supplier)}, handing {@code task} the fencing token of
   * the grant it runs under (see {@link FleetPermit}).
   */
  <T extends @Nullable Object> CompletableFuture<T> submitFenced(
      LongFunction<? extends CompletionStage<T>> task);
}
