package io.bulkhead.redis;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadBuilder;
import io.bulkhead.BulkheadListener;
import io.bulkhead.QueueSettings;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Builds a {@link FleetBulkhead}. Obtain one from {@link RedisCompartments#builder(String)}.
 *
 * <pre>{@code
 * FleetBulkhead llm = fleet.builder("llm")
 *     .limit(10)                                 // calls in flight across the fleet
 *     .maxQueue(20)                              // callers that may wait in this process
 *     .maxWait(Duration.ofSeconds(1))            // how long one may wait, locally and for the fleet
 *     .maxCallDuration(Duration.ofSeconds(30))   // the longest one call holds its slot
 *     .build();                                  // fails closed while Redis is unreachable
 * }</pre>
 *
 * <p>The limit, queue and wait are checked like {@link Bulkhead#builder(String)}'s, with the same
 * defaults ({@link QueueSettings#DEFAULT}: no queue; a queue needs a wait); {@code maxCallDuration}
 * is required. While this process's lease cannot cover a call (Redis unreachable for a whole lease
 * TTL), a compartment refuses every call by default ({@link #failClosed()}); a {@link
 * #fallbackToLocalShare(int) local share} admits some without a lease instead, at the price of the
 * fleet's limit. This class is <em>not</em> thread-safe.
 */
public final class RedisCompartmentBuilder {

  private final RedisCompartments fleet;
  private final String name;
  private final BulkheadBuilder local;
  private int limit;
  private int localShare; // 0: fail closed, the default
  private @Nullable Duration maxCallDuration;

  RedisCompartmentBuilder(RedisCompartments fleet, String name) {
    this.fleet = fleet;
    this.local = Bulkhead.builder(name); // checks the name
    this.name = name;
  }

  /**
   * Sets how many calls may be in flight at once across the fleet, at most 2^30 - 1. The limit is
   * stored in Redis, and the latest {@code build()} or {@code setLimit} of any process wins: every
   * process admits against it, and one whose own limit differs logs a warning and never runs more
   * than its own itself.
   */
  public RedisCompartmentBuilder limit(int limit) {
    local.limit(limit);
    if (limit > LeaseSlots.MAX_SLOTS) {
      throw new IllegalArgumentException(
          "limit must be at most " + LeaseSlots.MAX_SLOTS + " but was " + limit);
    }
    this.limit = limit;
    return this;
  }

  /** Sets how many callers of this process may wait; see {@link BulkheadBuilder#maxQueue(int)}. */
  public RedisCompartmentBuilder maxQueue(int maxQueue) {
    local.maxQueue(maxQueue);
    return this;
  }

  /**
   * Lets any number of callers of this process wait; see {@link BulkheadBuilder#unboundedQueue}.
   */
  public RedisCompartmentBuilder unboundedQueue() {
    local.unboundedQueue();
    return this;
  }

  /**
   * Sets how long one caller may wait, for a local slot and then for a slot of the lease together;
   * see {@link BulkheadBuilder#maxWait(Duration)}.
   */
  public RedisCompartmentBuilder maxWait(Duration maxWait) {
    local.maxWait(maxWait);
    return this;
  }

  /**
   * Lets a caller wait, for a local slot and then for a slot of the lease, until it gets them; see
   * {@link BulkheadBuilder#unboundedWait()}.
   */
  public RedisCompartmentBuilder unboundedWait() {
    local.unboundedWait();
    return this;
  }

  /** Replaces {@code maxQueue} and {@code maxWait} with {@code queue}'s. */
  public RedisCompartmentBuilder queue(QueueSettings queue) {
    local.queue(queue);
    return this;
  }

  /** Adds a listener for this process's events; see {@link BulkheadListener}. */
  public RedisCompartmentBuilder listener(BulkheadListener listener) {
    local.listener(listener);
    return this;
  }

  /**
   * Sets the longest one call holds its slot (required): its lease covers it. A process admits a
   * call only while Redis keeps counting the call's slot for at least this long, so a process cut
   * off from Redis stops admitting, and its calls end before their slots go to another process. A
   * call that runs longer is counted while its process reaches Redis, and otherwise is the one way
   * past the limit ({@link FleetStats#callsOverran()}). Longer costs this much more time before the
   * slots of a process that died come back. Use the dependency's own time-out plus a margin.
   */
  public RedisCompartmentBuilder maxCallDuration(Duration maxCallDuration) {
    Objects.requireNonNull(maxCallDuration, "maxCallDuration");
    if (maxCallDuration.isNegative() || maxCallDuration.toMillis() < 1) {
      throw new IllegalArgumentException(
          "maxCallDuration must be at least 1 ms but was " + maxCallDuration);
    }
    this.maxCallDuration = maxCallDuration;
    return this;
  }

  /**
   * While this process's lease cannot cover a call (Redis unreachable since start-up, or for a
   * whole lease TTL), admits at most {@code share} calls of this process without a lease, the calls
   * still running under the lease included. The fleet may then run up to the limit plus the shares
   * of the processes cut off from Redis, until those calls end.
   *
   * <p>A call that finds the share taken is refused at once with {@code QUEUE_FULL}: it does not
   * wait for a slot of the share, whatever {@code maxQueue} and {@code maxWait} say, and callers
   * already waiting when the switch comes are refused the same way unless the share has room. The
   * refusal is counted in {@link FleetStats#refusedByFallback()}, and in this process's {@code
   * stats()} as a rejection with {@code QUEUE_FULL}.
   */
  public RedisCompartmentBuilder fallbackToLocalShare(int share) {
    if (share < 1) {
      throw new IllegalArgumentException(
          "fallbackToLocalShare must be at least 1 but was "
              + share
              + "; use failClosed() to refuse every call while Redis is unreachable");
    }
    this.localShare = share;
    return this;
  }

  /**
   * While this process's lease cannot cover a call, refuses every call at once with {@code
   * QUEUE_FULL}, as {@link #fallbackToLocalShare(int)} refuses beyond its share. The default: the
   * fleet then never runs more than its limit.
   */
  public RedisCompartmentBuilder failClosed() {
    this.localShare = 0;
    return this;
  }

  /**
   * Returns a new compartment with these settings, after one sync with Redis (bounded by the
   * connect and command timeouts; it starts in fallback if Redis does not answer).
   *
   * @throws IllegalArgumentException as {@link BulkheadBuilder#build()} does, if {@code
   *     maxCallDuration} is not set, or if the local share is larger than the limit
   */
  public FleetBulkhead build() {
    Bulkhead gate = local.build(); // checks limit, queue and wait together
    if (maxCallDuration == null) {
      throw new IllegalArgumentException(
          "maxCallDuration of fleet compartment '"
              + name
              + "' is not set: the longest one call holds its slot, which its lease must cover"
              + " (the dependency's time-out plus a margin)");
    }
    if (localShare > limit) {
      throw new IllegalArgumentException(
          "fallbackToLocalShare "
              + localShare
              + " of compartment '"
              + name
              + "' is larger than its limit "
              + limit);
    }
    return fleet.register(new RedisBulkhead(fleet, gate, localShare, maxCallDuration.toNanos()));
  }
}
